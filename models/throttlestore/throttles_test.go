package throttlestore

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

// postgresURL is the admin URL of the PostgreSQL server the tests share.
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }

var rt0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) { f(t, New(s)) })
}

// count is the number of rows in password_throttles.
func count(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	require.NoError(t, s.store.DB().Table("password_throttles").Count(&n).Error)
	return n
}

func TestPasswordThrottles(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for i := 1; i <= 3; i++ {
			n, err := s.RecordPasswordFailure(ctx, rt0, "a", time.Hour)
			require.NoError(t, err)
			require.Equal(t, i, n)
		}
		rows, err := s.PasswordThrottles(ctx, rt0, "a", "b")
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Equal(t, 3, rows["a"].Failures)
		require.Zero(t, rows["a"].BlockedUntil)

		won, err := s.ClaimPasswordBucket(ctx, "a", rt0, rt0.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, won, "not blocked: the claim sets the block")
		won, err = s.ClaimPasswordBucket(ctx, "a", rt0, rt0.Add(time.Second))
		require.NoError(t, err)
		require.False(t, won, "blocked: a second claim loses")
		rows, _ = s.PasswordThrottles(ctx, rt0, "a")
		require.Equal(t, rt0.Add(time.Minute).UnixMicro(), rows["a"].BlockedUntil, "never moved back")
		require.NoError(t, s.ForgetPasswordFailure(ctx, "a"))
		rows, _ = s.PasswordThrottles(ctx, rt0, "a")
		require.Equal(t, 2, rows["a"].Failures, "one failure taken back")

		// Past its expiry a row is gone for readers and starts again.
		late := rt0.Add(2 * time.Hour)
		rows, _ = s.PasswordThrottles(ctx, late, "a")
		require.Empty(t, rows)
		n, err := s.RecordPasswordFailure(ctx, late, "a", time.Hour)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		rows, _ = s.PasswordThrottles(ctx, late, "a")
		require.Zero(t, rows["a"].BlockedUntil, "an expired block does not come back")

		require.NoError(t, s.MarkPasswordBucket(ctx, "known", late.Add(time.Hour)))
		rows, _ = s.PasswordThrottles(ctx, late, "known", "a")
		require.Len(t, rows, 2)
		require.Zero(t, rows["known"].Failures)

		require.NoError(t, s.ClearPasswordThrottles(ctx, "a"))
		rows, _ = s.PasswordThrottles(ctx, late, "a", "known")
		require.Len(t, rows, 1)

		_, err = s.store.PurgeExpired(ctx, late.Add(2*time.Hour))
		require.NoError(t, err)
		require.EqualValues(t, 0, count(t, s))
	})
}

// Failures counted by racing requests are all counted.
func TestPasswordFailuresRace(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				_, err := s.RecordPasswordFailure(context.Background(), rt0, "race", time.Hour)
				require.NoError(t, err)
			})
		}
		wg.Wait()
		rows, err := s.PasswordThrottles(context.Background(), rt0, "race")
		require.NoError(t, err)
		require.Equal(t, 20, rows["race"].Failures)
	})
}
