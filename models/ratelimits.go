package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// RateLimit is the state of one rate-limit bucket, shared by every latchkey
// instance on the database. The bucket allows Burst events at once and one
// more every Interval (a token bucket), kept as the one number GCRA needs:
// FullAt, the instant at which the bucket is full again, in microseconds
// since the Unix epoch. An integer, not a timestamp, so that the take is the
// same arithmetic in SQLite and PostgreSQL. A row whose FullAt has passed
// means the same as no row (a full bucket), so the purge may delete it.
//
// Bucket is an opaque name chosen by the caller; it must not hold personal
// data (app/email hashes addresses and client IPs into it).
type RateLimit struct {
	Bucket string `gorm:"primaryKey"`
	FullAt int64  `gorm:"not null"`
}

// TableName is rate_limits.
func (RateLimit) TableName() string { return "rate_limits" }

// RateBucket is one allowance to spend an event from: Burst events at once,
// then one more every Interval, so Burst events per Interval×Burst window.
type RateBucket struct {
	Key      string
	Interval time.Duration
	Burst    int
}

// errRateRefused rolls back a take that one bucket refused.
var errRateRefused = errors.New("rate limit reached")

// takeRateSQL spends one event from a bucket in one statement, so two
// instances racing for the last event cannot both get it: the upsert locks
// the bucket's row (PostgreSQL: the row lock taken by ON CONFLICT DO UPDATE,
// re-reading the latest committed row; SQLite: the write lock), and the row
// comes back only when the event was spent. With T the interval and W the
// window (T×Burst): an unknown bucket (or one purged) is full, so it is
// inserted as FullAt = now+T; a known one may spend when
// max(FullAt, now) + T <= now + W, that is FullAt <= now + W - T (the
// "bound" argument), and then moves FullAt to max(FullAt, now) + T. When
// the WHERE fails, nothing is written and RETURNING yields no row.
// Placeholders are ?, which GORM renders as $n for PostgreSQL.
const takeRateSQL = `INSERT INTO rate_limits (bucket, full_at) VALUES (?, ?)
ON CONFLICT (bucket) DO UPDATE SET full_at =
	CASE WHEN rate_limits.full_at > ? THEN rate_limits.full_at + ? ELSE ? END
WHERE rate_limits.full_at <= ?
RETURNING full_at`

// TakeRateLimits spends one event from each bucket, all or none: in one
// transaction it takes from the buckets in order and stops at the first
// that has none left, rolling back what it took, so a refused request
// spends nothing anywhere. It returns that bucket's index, or -1 when every
// bucket gave an event. Keys must be distinct.
//
// Because a refusal rolls everything back, only requests that every bucket
// allowed write rows: the table grows no faster than events are allowed,
// and the purge (PurgeExpired) removes rows of buckets that are full again.
// Two transactions lock rows in the order of their buckets; callers list
// their tiers in one fixed order, one key per tier, so they cannot deadlock.
//
// now comes from the caller's clock (instances' clocks are assumed to agree
// to well within an interval, as NTP keeps them).
func (s *Store) TakeRateLimits(ctx context.Context, now time.Time, buckets []RateBucket) (refused int, err error) {
	for _, b := range buckets {
		if b.Interval < time.Microsecond || b.Burst < 1 || b.Key == "" {
			return -1, fmt.Errorf("take rate limits: bucket %q: interval %v and burst %d must be positive", b.Key, b.Interval, b.Burst)
		}
	}
	refused = -1
	at := now.UnixMicro()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for i, b := range buckets {
			interval := b.Interval.Microseconds()
			first := at + interval
			bound := at + interval*int64(b.Burst-1) // now + W - T
			rows, err := tx.Raw(takeRateSQL, b.Key, first, at, interval, first, bound).Rows()
			if err != nil {
				return err
			}
			spent := rows.Next()
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return err
			}
			if !spent {
				refused = i
				return errRateRefused
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errRateRefused):
		return refused, nil
	case err != nil:
		return -1, fmt.Errorf("take rate limits: %w", err)
	}
	return -1, nil
}

// purgeRateLimits deletes the buckets that are full again: full at now is
// as good as no row. On PostgreSQL the rows a take has locked are skipped
// (SKIP LOCKED): a take is using them, so they are not full, and waiting
// for one could deadlock with a take that holds it and waits for another
// row this purge has locked (takes lock several rows, in tier order; a
// purge would lock them in any order). Another instance's purge is skipped
// alike. SQLite has one writer at a time and no row locks to wait for.
func (s *Store) purgeRateLimits(tx *gorm.DB, now time.Time) *gorm.DB {
	if s.dialect == DialectPostgres {
		return tx.Exec(`DELETE FROM rate_limits WHERE bucket IN
			(SELECT bucket FROM rate_limits WHERE full_at <= ? FOR UPDATE SKIP LOCKED)`, now.UnixMicro())
	}
	return tx.Where("full_at <= ?", now.UnixMicro()).Delete(&RateLimit{})
}
