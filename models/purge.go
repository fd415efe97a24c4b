package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models/batchpurge"
)

// PurgeExpired deletes expired sessions, verification tokens, pending
// second steps, jwt sign-ins, used WebAuthn challenges, password throttle
// counters and the rate-limit buckets that are full again (a missing row is
// a full bucket, so that changes nothing); it returns how many went. Every
// statement deletes rows past now and none waits for a rate-limit take, so
// every instance may run it at once. The tables that grow with the users
// are purged in batches, each its own transaction, oldest first through the
// expires index, with a pause after each (models/batchpurge): a
// purge of millions of rows holds no lock a sign-in's insert waits for
// longer than about one short batch.
func (s *Store) PurgeExpired(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	db := s.db.WithContext(ctx)
	// By table name: second_steps and sign_ins are the feature stores'
	// tables (twofactorstore, accountstore), but their rows expire here.
	for _, t := range [][2]string{{"sessions", "id"}, {"verification_tokens", "token_hash"}, {"second_steps", "token_hash"}, {"sign_ins", "id"}} {
		gone, err := batchpurge.Expired(ctx, db, s.dialect == DialectPostgres, t[0], t[1], dbTime(now))
		n += gone
		if err != nil {
			return n, fmt.Errorf("purge expired %s: %w", t[0], err)
		}
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		r := tx.Where("expires < ?", now.Unix()).Delete(&UsedChallenge{})
		if r.Error != nil {
			return r.Error
		}
		n += r.RowsAffected
		// models/throttlestore's counters: their times are microseconds.
		if r = tx.Exec("DELETE FROM password_throttles WHERE expires <= ?", now.UnixMicro()); r.Error != nil {
			return r.Error
		}
		n += r.RowsAffected
		r = s.purgeRateLimits(tx, now)
		n += r.RowsAffected
		return r.Error
	})
	if err != nil {
		return n, fmt.Errorf("purge expired: %w", err)
	}
	return n, nil
}
