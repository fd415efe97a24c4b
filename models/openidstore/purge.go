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
// (published_until before now), and clears the previous secret of the
// clients whose overlap is over (previous_secret_until at or before now:
// no longer accepted, so its hash need not stay in the row); it returns
// how many rows went or were cleared. Every statement touches only rows
// past now, so every instance may run it at once.
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
		r := tx.Model(&Client{}).Where("previous_secret_until <= ?", at).Updates(noPreviousSecret())
		n += r.RowsAffected
		return r.Error
	})
	if err != nil {
		return 0, fmt.Errorf("purge openid rows: %w", err)
	}
	return n, nil
}
