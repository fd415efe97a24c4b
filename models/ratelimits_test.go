package models

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

var rt0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// takeOne spends one event of a single bucket: n events per window.
func takeOne(t *testing.T, s *Store, key string, n int, window time.Duration, now time.Time) bool {
	t.Helper()
	refused, err := s.TakeRateLimits(context.Background(), now, []RateBucket{{Key: key, Interval: window / time.Duration(n), Burst: n}})
	require.NoError(t, err)
	return refused < 0
}

// The take is one upsert with RETURNING: SQLite has both from 3.35.
func TestSQLiteSupportsUpsertReturning(t *testing.T) {
	var v string
	require.NoError(t, open(t).db.Raw("SELECT sqlite_version()").Scan(&v).Error)
	parts := strings.SplitN(v, ".", 3)
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	require.True(t, major > 3 || major == 3 && minor >= 35, "SQLite %s", v)
}

// A bucket is a token bucket: n events at once, then one every window/n;
// other keys are not affected; a refusal changes nothing.
func TestTakeRateLimitsWindow(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		s := connect(t, c)
		for i := range 5 {
			require.True(t, takeOne(t, s, "a", 5, time.Hour, rt0), "event %d of 5", i+1)
		}
		require.False(t, takeOne(t, s, "a", 5, time.Hour, rt0.Add(time.Minute)), "6th event within the window")
		require.True(t, takeOne(t, s, "b", 5, time.Hour, rt0.Add(time.Minute)), "another key is not limited by a's events")
		// One event comes back every window/n (12 minutes).
		require.True(t, takeOne(t, s, "a", 5, time.Hour, rt0.Add(12*time.Minute)), "one event after window/n")
		require.False(t, takeOne(t, s, "a", 5, time.Hour, rt0.Add(13*time.Minute)), "two events after window/n")
		// Idle for a whole window: full again, and no more than full.
		later := rt0.Add(3 * time.Hour)
		for i := range 5 {
			require.True(t, takeOne(t, s, "a", 5, time.Hour, later), "event %d of a refilled bucket", i+1)
		}
		require.False(t, takeOne(t, s, "a", 5, time.Hour, later))

		require.True(t, takeOne(t, s, "one", 1, time.Minute, rt0))
		require.False(t, takeOne(t, s, "one", 1, time.Minute, rt0.Add(59*time.Second)))
		require.True(t, takeOne(t, s, "one", 1, time.Minute, rt0.Add(time.Minute)))
	})
}

// Several buckets are spent all or none: the first that has nothing left is
// named and the others keep their events; a refused request writes no row.
func TestTakeRateLimitsRefusalSpendsNothing(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		s := connect(t, c)
		ctx := context.Background()
		wide := RateBucket{Key: "wide", Interval: time.Minute, Burst: 3}
		narrow := RateBucket{Key: "narrow", Interval: time.Hour, Burst: 1}
		fresh := RateBucket{Key: "fresh", Interval: time.Minute, Burst: 3}

		refused, err := s.TakeRateLimits(ctx, rt0, []RateBucket{wide, narrow})
		require.NoError(t, err)
		require.Equal(t, -1, refused)
		for range 5 {
			refused, err = s.TakeRateLimits(ctx, rt0, []RateBucket{wide, fresh, narrow})
			require.NoError(t, err)
			require.Equal(t, 2, refused, "narrow is spent")
		}
		require.EqualValues(t, 2, count(t, s, "rate_limits"), "the refused requests wrote no row for fresh")
		for i := range 2 {
			refused, err = s.TakeRateLimits(ctx, rt0, []RateBucket{wide})
			require.NoError(t, err)
			require.Equal(t, -1, refused, "wide kept its events through the refusals (%d)", i)
		}
		refused, err = s.TakeRateLimits(ctx, rt0, []RateBucket{fresh, wide})
		require.NoError(t, err)
		require.Equal(t, 1, refused)

		_, err = s.TakeRateLimits(ctx, rt0, []RateBucket{{Key: "x", Interval: 0, Burst: 1}})
		require.ErrorContains(t, err, "must be positive")
		_, err = s.TakeRateLimits(ctx, rt0, []RateBucket{{Key: "x", Interval: time.Second, Burst: 0}})
		require.ErrorContains(t, err, "must be positive")
	})
}

// race has workers goroutines, spread over the stores, take buckets
// attempts times each, all at the same instant, and returns how many takes
// were granted; a refusal must come from the last bucket.
func race(t *testing.T, stores []*Store, workers, attempts int, buckets []RateBucket) int64 {
	t.Helper()
	var (
		wg      sync.WaitGroup
		granted atomic.Int64
		errs    = make(chan error, workers*attempts)
		start   = make(chan struct{})
	)
	for i := range workers {
		s := stores[i%len(stores)]
		wg.Go(func() {
			<-start
			for range attempts {
				refused, err := s.TakeRateLimits(context.Background(), rt0, buckets)
				switch {
				case err != nil:
					errs <- err
				case refused < 0:
					granted.Add(1)
				case refused != len(buckets)-1:
					errs <- fmt.Errorf("refused by bucket %d", refused)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return granted.Load()
}

// Two handles on one database (two instances) and many goroutines racing
// for the last events of a bucket at the same instant: exactly the limit
// gets through.
func TestTakeRateLimitsConcurrent(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		stores := []*Store{connect(t, c), connect(t, c)}
		const limit = 7
		tight := RateBucket{Key: "tight", Interval: time.Hour, Burst: limit}
		require.EqualValues(t, limit, race(t, stores, 24, 4, []RateBucket{tight}), "96 takes raced for %d events", limit)
	})
}

// The same race over two buckets: the refused takes spend nothing in the
// bucket they passed, whichever instance made them.
func TestTakeRateLimitsConcurrentRefusalSpendsNothing(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		stores := []*Store{connect(t, c), connect(t, c)}
		const limit = 7
		shared := RateBucket{Key: "shared", Interval: time.Minute, Burst: 1000}
		tight := RateBucket{Key: "tight", Interval: time.Hour, Burst: limit}
		require.EqualValues(t, limit, race(t, stores, 24, 4, []RateBucket{shared, tight}))
		for i := range 1000 - limit {
			require.True(t, takeOne(t, stores[i%2], "shared", 1000, 1000*time.Minute, rt0), "shared event %d", i)
		}
		require.False(t, takeOne(t, stores[0], "shared", 1000, 1000*time.Minute, rt0), "shared was spent by the granted takes only")
	})
}

// The purge removes buckets that are full again, and a purged bucket
// behaves as it would have if kept: full.
func TestPurgeRateLimits(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		s := connect(t, c)
		ctx := context.Background()
		require.True(t, takeOne(t, s, "early", 2, time.Hour, rt0)) // full at rt0+30m
		require.True(t, takeOne(t, s, "exact", 1, time.Hour, rt0)) // full at rt0+1h: as good as no row then
		require.True(t, takeOne(t, s, "late", 2, time.Hour, rt0.Add(50*time.Minute)))
		require.True(t, takeOne(t, s, "late", 2, time.Hour, rt0.Add(50*time.Minute)))
		n, err := s.PurgeExpired(ctx, rt0.Add(time.Hour))
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		var left []RateLimit
		require.NoError(t, s.db.Find(&left).Error)
		require.Len(t, left, 1)
		require.Equal(t, "late", left[0].Bucket)
		require.Equal(t, rt0.Add(110*time.Minute).UnixMicro(), left[0].FullAt, "late is empty until 50m + 2×30m")
		require.False(t, takeOne(t, s, "late", 2, time.Hour, rt0.Add(time.Hour)), "a live bucket is kept")

		for range 2 {
			require.True(t, takeOne(t, s, "early", 2, time.Hour, rt0.Add(time.Hour)), "the purged bucket is full")
		}
		require.False(t, takeOne(t, s, "early", 2, time.Hour, rt0.Add(time.Hour)))
	})
}

// On PostgreSQL the purge does not wait for a take holding a bucket's row
// (waiting could deadlock with a take waiting for a row the purge holds):
// it skips the row, which a later purge removes.
func TestPurgeSkipsBucketsInUse(t *testing.T) {
	s := connect(t, Config{Dialect: DialectPostgres, DSN: pgtest.NewDatabase(t, postgresURL)})
	ctx := context.Background()
	require.True(t, takeOne(t, s, "busy", 1, time.Minute, rt0))
	require.True(t, takeOne(t, s, "idle", 1, time.Minute, rt0))
	take := s.db.Begin()
	require.NoError(t, take.Error)
	defer take.Rollback()
	require.NoError(t, take.Exec("SELECT full_at FROM rate_limits WHERE bucket = 'busy' FOR UPDATE").Error)

	quick, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	n, err := s.PurgeExpired(quick, rt0.Add(time.Hour))
	require.NoError(t, err, "the purge went on past the locked row")
	require.EqualValues(t, 1, n)
	require.NoError(t, take.Commit().Error)
	n, err = s.PurgeExpired(ctx, rt0.Add(time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "a later purge takes it")
}
