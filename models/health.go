package models

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/models/failover"
	"gorm.io/gorm"
)

// Ready reports whether the database can serve requests now, within ctx's
// deadline: a statement that reads a table (schema_migrations) through
// the pool, after, for SQLite, a check that the file the pool has open is
// still the one at the configured path and may be written (asked without
// opening it, see sqlitefile.File.Intact).
// PostgreSQL that is stopped, restarting or unreachable fails the
// statement; so does a SQLite file whose disk returns I/O errors.
func (s *Store) Ready(ctx context.Context) error {
	if s.file != nil {
		if err := s.file.Intact(); err != nil {
			return err
		}
	}
	if s.dialect == DialectPostgres {
		// Ready means writable: a pooled connection to a node that became a
		// standby still reads.
		var standby bool
		if err := s.db.WithContext(ctx).Raw("SELECT pg_is_in_recovery() FROM schema_migrations LIMIT 1").Scan(&standby).Error; err != nil {
			return fmt.Errorf("database check: %w", err)
		}
		if standby {
			return fmt.Errorf("database check: %w (the server is a read-only standby)", failover.ErrUnavailable)
		}
		return nil
	}
	var n int64
	if err := s.db.WithContext(ctx).Raw("SELECT count(*) FROM schema_migrations").Scan(&n).Error; err != nil {
		return fmt.Errorf("database check: %w", err)
	}
	return nil
}

// watchErrors makes every statement that fails through GORM call onError
// (ReadSession, which bypasses GORM, calls it itself), so operators can
// count database failures in one place.
func (s *Store) watchErrors(onError func()) error {
	if onError == nil {
		return nil
	}
	s.onError = onError
	count := func(db *gorm.DB) { s.countFailure(db.Error) }
	cb := s.db.Callback()
	for _, r := range []struct {
		after    string
		register func(string, func(*gorm.DB)) error
	}{
		{"gorm:create", cb.Create().After("gorm:create").Register},
		{"gorm:query", cb.Query().After("gorm:query").Register},
		{"gorm:update", cb.Update().After("gorm:update").Register},
		{"gorm:delete", cb.Delete().After("gorm:delete").Register},
		{"gorm:row", cb.Row().After("gorm:row").Register},
		{"gorm:raw", cb.Raw().After("gorm:raw").Register},
	} {
		if err := r.register("latchkey:count_errors", count); err != nil {
			return fmt.Errorf("watch database errors after %s: %w", r.after, err)
		}
	}
	return nil
}

// countFailure calls onError when err is a failure of the database rather
// than an answer the code expects: no row, a unique or foreign-key conflict
// the caller handles, or a request cancelled by its client.
func (s *Store) countFailure(err error) {
	if s.onError == nil || err == nil ||
		errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, ErrNotFound) ||
		errors.Is(err, gorm.ErrDuplicatedKey) || errors.Is(err, gorm.ErrForeignKeyViolated) ||
		errors.Is(err, context.Canceled) {
		return
	}
	s.onError()
}
