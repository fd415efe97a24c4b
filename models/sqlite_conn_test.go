package models

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every pooled SQLite connection reads the file through the memory map
// (GET /session's lookup at size, issue #36), and the DSN's options still
// apply on each: the connect hook adds to them, it does not replace them.
func TestSQLiteConnectionsMapTheFile(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "latchkey.db"))
	require.NoError(t, err)
	defer s.Close()
	sqlDB, err := s.db.DB()
	require.NoError(t, err)
	ctx := context.Background()
	// Held at once, so the pool hands out distinct connections.
	var conns []*sql.Conn
	for range 4 {
		c, err := sqlDB.Conn(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mmap, busy, fk int64
		require.NoError(t, c.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&mmap))
		require.NoError(t, c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy))
		require.NoError(t, c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk))
		require.EqualValues(t, sqliteMmapSize, mmap, "connection %d", i)
		require.EqualValues(t, 5000, busy, "connection %d", i)
		require.EqualValues(t, 1, fk, "connection %d", i)
		require.NoError(t, c.Close())
	}
}
