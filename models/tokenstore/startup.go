package tokenstore

import (
	"context"
	"fmt"

	"github.com/latchkey-auth/latchkey/models"
)

// Unsettled lists, after the id after and by id, up to n accounts whose
// tokens the start-up step must still settle: those of a provider in keep
// holding a token that does not start with prefix (stored in the clear),
// and those of any other provider holding a token at all. Once settled,
// an account is never listed again, so the step is idempotent and a
// database with nothing to settle costs one query.
func (s *Store) Unsettled(ctx context.Context, keep []string, prefix, after string, n int) ([]Account, error) {
	plain := "(%[1]s IS NOT NULL AND substr(%[1]s, 1, ?) <> ?)"
	held := "access_token IS NOT NULL OR refresh_token IS NOT NULL OR id_token IS NOT NULL"
	unsealed := "(" + fmt.Sprintf(plain, "access_token") + " OR " + fmt.Sprintf(plain, "refresh_token") + " OR " + fmt.Sprintf(plain, "id_token") + ")"
	l := len(prefix)
	q := s.db().WithContext(ctx).Where("id > ?", after)
	if len(keep) == 0 {
		q = q.Where(held)
	} else {
		q = q.Where("(provider IN ? AND "+unsealed+") OR (provider NOT IN ? AND ("+held+"))",
			keep, l, prefix, l, prefix, l, prefix, keep)
	}
	var out []Account
	if err := q.Order("id").Limit(n).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list unsettled tokens: %w", err)
	}
	return out, nil
}

// Erase makes the values the start-up step replaced unreadable from the
// database file: SQLite keeps a rewritten row's old bytes in free pages
// and in its write-ahead log until they are reused, so the log is
// checkpointed and the file rebuilt (VACUUM). PostgreSQL's old row
// versions go with its autovacuum; nothing is done there.
func (s *Store) Erase(ctx context.Context) error {
	if s.store.Dialect() != models.DialectSQLite {
		return nil
	}
	db, err := s.db().DB()
	if err != nil {
		return fmt.Errorf("erase replaced tokens: %w", err)
	}
	for _, stmt := range []string{"PRAGMA wal_checkpoint(TRUNCATE)", "VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("erase replaced tokens: %s: %w", stmt, err)
		}
	}
	return nil
}

// ClearMarks clears the refresh mark of every account whose provider is not
// in keep (store_tokens turned off since): no token of it is kept, so
// there is nothing to sign in again for. It returns the accounts cleared.
func (s *Store) ClearMarks(ctx context.Context, keep []string) (int64, error) {
	q := s.db().WithContext(ctx).Model(&Account{}).Where("token_error IS NOT NULL")
	if len(keep) > 0 {
		q = q.Where("provider NOT IN ?", keep)
	}
	r := q.Update("token_error", nil)
	if r.Error != nil {
		return 0, fmt.Errorf("clear refresh marks: %w", r.Error)
	}
	return r.RowsAffected, nil
}
