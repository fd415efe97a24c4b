// Package stmtcache runs the reads of request paths that GORM's
// reflection and callbacks would cost more than the database does (at
// millions of users a cache in front of them rarely holds the row, so
// they run per request: issue #36) as statements prepared once, by their
// text (database/sql then prepares each once per pooled connection).
// models.Store holds one (Store.Statements); a feature store writes its
// SQL for the store's dialect and reads the rows itself.
package stmtcache

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// Cache is the prepared statements of one database. Build it with New.
type Cache struct {
	db *sql.DB
	// keepContext is false on SQLite: the request's context is not handed
	// to the driver, for the reason models' readSession gives (a
	// cancellable context costs a goroutine per query, and a local read on
	// an index has nothing worth cancelling).
	keepContext bool

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// New returns the cache over db; sqlite says whether it is a SQLite file.
func New(db *sql.DB, sqlite bool) *Cache {
	return &Cache{db: db, keepContext: !sqlite, stmts: map[string]*sql.Stmt{}}
}

// Query runs query with args as a statement prepared once. The caller
// closes the rows and counts a failure (models.Store.CountFailure): GORM's
// callbacks do not see these queries, and an error may come from reading
// the rows too.
func (c *Cache) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	stmt, err := c.get(query)
	if err != nil {
		return nil, err
	}
	if !c.keepContext {
		ctx = context.Background()
	}
	return stmt.QueryContext(ctx, args...)
}

func (c *Cache) get(query string) (*sql.Stmt, error) {
	c.mu.RLock()
	stmt, ok := c.stmts[query]
	c.mu.RUnlock()
	if ok {
		return stmt, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if stmt, ok = c.stmts[query]; ok { // prepared by another request meanwhile
		return stmt, nil
	}
	stmt, err := c.db.Prepare(query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	c.stmts[query] = stmt
	return stmt, nil
}

// Close releases every prepared statement.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, stmt := range c.stmts {
		_ = stmt.Close()
	}
	clear(c.stmts)
}
