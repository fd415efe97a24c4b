// Package throttlestore is the password sign-in throttle's storage: one
// counter row per bucket (password_throttles, schema step 5), for
// app/signin's exponential back-off. It is a feature package of models
// (models/<feature>store, on models.Store's connection); models' purge
// deletes the expired rows with the rest.
package throttlestore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Store is the throttle's storage on a models.Store's database.
type Store struct{ store *models.Store }

// New returns the throttle's storage on s's database (no state of its own).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle, bound to ctx.
func (s *Store) db(ctx context.Context) *gorm.DB { return s.store.DB().WithContext(ctx) }

// PasswordThrottle counts failed password sign-ins of one bucket (an
// account from one client, a client, an account; the names are opaque,
// chosen and hashed by app/signin) for the exponential back-off. Times are
// microseconds since the Unix epoch, as in RateLimit. A row past Expires
// is as good as none: the counter starts again, and the purge deletes it.
type PasswordThrottle struct {
	Bucket       string `gorm:"primaryKey"`
	Failures     int    `gorm:"not null"`
	BlockedUntil int64  `gorm:"not null"`
	Expires      int64  `gorm:"not null"`
}

// TableName is password_throttles.
func (PasswordThrottle) TableName() string { return "password_throttles" }

// PasswordThrottles returns the live rows (not expired at now) of the
// given buckets, by bucket; a bucket without one is absent.
func (s *Store) PasswordThrottles(ctx context.Context, now time.Time, buckets ...string) (map[string]PasswordThrottle, error) {
	var rows []PasswordThrottle
	err := s.db(ctx).Where("bucket IN ? AND expires > ?", buckets, now.UnixMicro()).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read password throttles: %w", err)
	}
	out := make(map[string]PasswordThrottle, len(rows))
	for _, r := range rows {
		out[r.Bucket] = r
	}
	return out, nil
}

// recordFailureSQL counts one failure in one statement (so racing
// instances count every failure): a missing or expired row starts at 1 and
// unblocked, a live one adds 1; either way the row lives until expires.
const recordFailureSQL = `INSERT INTO password_throttles (bucket, failures, blocked_until, expires) VALUES (?, 1, 0, ?)
ON CONFLICT (bucket) DO UPDATE SET
	failures = CASE WHEN password_throttles.expires <= ? THEN 1 ELSE password_throttles.failures + 1 END,
	blocked_until = CASE WHEN password_throttles.expires <= ? THEN 0 ELSE password_throttles.blocked_until END,
	expires = ?
RETURNING failures`

// RecordPasswordFailure counts a failure in bucket at now, keeping the
// count until now+keep (each failure moves that on), and returns the count.
func (s *Store) RecordPasswordFailure(ctx context.Context, now time.Time, bucket string, keep time.Duration) (int, error) {
	at, until := now.UnixMicro(), now.Add(keep).UnixMicro()
	var failures int
	if err := s.db(ctx).Raw(recordFailureSQL, bucket, until, at, at, until).Scan(&failures).Error; err != nil {
		return 0, fmt.Errorf("record password failure: %w", err)
	}
	return failures, nil
}

// ClaimPasswordBucket blocks bucket until the given time only if it is not
// blocked at now, and reports whether this call did: of attempts racing
// past a fresh block, exactly one wins it (one statement, so instances
// racing each other agree too).
func (s *Store) ClaimPasswordBucket(ctx context.Context, bucket string, now, until time.Time) (bool, error) {
	u := until.UnixMicro()
	r := s.db(ctx).Exec(`UPDATE password_throttles SET blocked_until = ?,
		expires = CASE WHEN expires > ? THEN expires ELSE ? END
		WHERE bucket = ? AND blocked_until <= ?`, u, u, u, bucket, now.UnixMicro())
	if r.Error != nil {
		return false, fmt.Errorf("claim password bucket: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// ForgetPasswordFailure takes one counted failure back from bucket (an
// attempt counted in advance that turned out not to be one).
func (s *Store) ForgetPasswordFailure(ctx context.Context, bucket string) error {
	err := s.db(ctx).Exec(`UPDATE password_throttles SET failures = failures - 1
		WHERE bucket = ? AND failures > 0`, bucket).Error
	if err != nil {
		return fmt.Errorf("forget password failure: %w", err)
	}
	return nil
}

// MarkPasswordBucket sets bucket to a clean row (no failures, not blocked)
// that lives until the given time: a marker, e.g. "this account signed in
// from this client", that the rules in app/signin read back.
func (s *Store) MarkPasswordBucket(ctx context.Context, bucket string, until time.Time) error {
	row := PasswordThrottle{Bucket: bucket, Expires: until.UnixMicro()}
	err := s.db(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "bucket"}},
		DoUpdates: clause.AssignmentColumns([]string{"failures", "blocked_until", "expires"}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("mark password bucket: %w", err)
	}
	return nil
}

// ClearPasswordThrottles deletes the buckets' rows: their counts start again.
func (s *Store) ClearPasswordThrottles(ctx context.Context, buckets ...string) error {
	if err := s.db(ctx).Where("bucket IN ?", buckets).Delete(&PasswordThrottle{}).Error; err != nil {
		return fmt.Errorf("clear password throttles: %w", err)
	}
	return nil
}
