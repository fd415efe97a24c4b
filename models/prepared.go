package models

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// preparedStmts holds the statements QueryPrepared prepared, by their text:
// each is prepared once per store (database/sql then prepares it once per
// pooled connection), not parsed again on every request.
type preparedStmts struct {
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// QueryPrepared runs query, a read on a request path that GORM's
// reflection and callbacks would cost more than the database does (at
// millions of users a cache rarely holds the row, so it runs per request:
// issue #36), as a statement prepared once. The caller closes the rows
// and counts a failure (CountFailure), as ReadSession does: an error may
// come from reading the rows too.
//
// On SQLite the request's context is not handed to the driver, for the
// reason readSession gives: the lookups that use this are local reads on
// an index, with nothing worth cancelling.
func (s *Store) QueryPrepared(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	stmt, err := s.prepared.get(s.db, query)
	if err != nil {
		return nil, err
	}
	if s.dialect == DialectSQLite {
		ctx = context.Background()
	}
	return stmt.QueryContext(ctx, args...)
}

// CountFailure counts err, when it is a failure of the database (see
// countFailure), as latchkey_db_errors_total: for queries made through
// QueryPrepared, which GORM's callbacks do not see.
func (s *Store) CountFailure(err error) { s.countFailure(err) }

func (p *preparedStmts) get(db interface{ DB() (*sql.DB, error) }, query string) (*sql.Stmt, error) {
	p.mu.RLock()
	stmt, ok := p.stmts[query]
	p.mu.RUnlock()
	if ok {
		return stmt, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if stmt, ok = p.stmts[query]; ok { // prepared by another request meanwhile
		return stmt, nil
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	stmt, err = sqlDB.Prepare(query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if p.stmts == nil {
		p.stmts = map[string]*sql.Stmt{}
	}
	p.stmts[query] = stmt
	return stmt, nil
}

// close releases every prepared statement.
func (p *preparedStmts) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, stmt := range p.stmts {
		_ = stmt.Close()
	}
	p.stmts = nil
}
