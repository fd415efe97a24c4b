package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// sqliteMmapSize is how much of the database file each SQLite connection
// reads through a shared memory map: SQLite's own cap on Linux
// (SQLITE_MAX_MMAP_SIZE, 2 GiB less 64 KiB; a larger value is cut to it).
//
// GET /session's lookup descends four B-trees (the token_hash index, the
// sessions table, the users key and table). Without the map every page
// outside a connection's 2 MB page cache is a read() and a copy; at 10⁶
// sessions that made a lookup cost 2.7 times its CPU on a small database,
// with the map 1.9 times (issue #36, docs/performance.md). The mapped pages
// are the operating system's page cache, shared by every connection and
// given back under memory pressure: they show in RSS as RssFile, not as
// memory latchkey holds.
const sqliteMmapSize = 0x7fff0000

// sqliteConnector opens mattn/go-sqlite3 connections to dsn and sets each
// one's mmap_size, which is a per-connection PRAGMA the DSN cannot carry.
// It is handed to database/sql directly (sql.OpenDB), so no driver name is
// registered process-wide.
type sqliteConnector struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
}

func newSQLiteConnector(dsn string) *sqliteConnector {
	return &sqliteConnector{dsn: dsn, driver: &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			if _, err := c.Exec(fmt.Sprintf("PRAGMA mmap_size = %d", sqliteMmapSize), nil); err != nil {
				return fmt.Errorf("set mmap_size: %w", err)
			}
			return nil
		},
	}}
}

func (c *sqliteConnector) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }

func (c *sqliteConnector) Driver() driver.Driver { return c.driver }

// openSQLite is the connection pool for dsn (see sqliteDialector).
func openSQLite(dsn string) *sql.DB { return sql.OpenDB(newSQLiteConnector(dsn)) }
