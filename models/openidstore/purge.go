package openidstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Purge deletes, in one transaction, the auth requests and tokens expired
// before now and the signing keys no longer published at now
// (published_until before now); it returns how many rows went. Every
// statement deletes rows past now, so every instance may run it at once.
func (s *Store) Purge(ctx context.Context, now time.Time) (int64, error) {
	at := models.DBTime(now)
	var n int64
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, q := range []struct {
			model any
			cond  string
		}{
			{&AuthRequest{}, "expires < ?"},
			{&Token{}, "expires < ?"},
			{&SigningKey{}, "published_until < ?"},
		} {
			r := tx.Where(q.cond, at).Delete(q.model)
			if r.Error != nil {
				return r.Error
			}
			n += r.RowsAffected
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("purge openid rows: %w", err)
	}
	return n, nil
}
