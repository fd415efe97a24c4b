package models

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPasswords(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "pw@example.com")

		_, err := s.PasswordHash(ctx, u.ID)
		require.ErrorIs(t, err, ErrNotFound, "no password until one is set")
		got, hash, err := s.UserAndPasswordByEmail(ctx, "PW@example.com")
		require.NoError(t, err)
		require.Equal(t, u.ID, got.ID)
		require.Empty(t, hash)

		_, err = s.PasswordChangedAt(ctx, u.ID)
		require.ErrorIs(t, err, ErrNotFound)
		require.NoError(t, s.SetPasswordHash(ctx, u.ID, "h1"))
		require.NoError(t, s.SetPasswordHash(ctx, u.ID, "h2"), "setting again replaces")
		at, err := s.PasswordChangedAt(ctx, u.ID)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), at, time.Minute)
		hash, err = s.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "h2", hash)
		_, hash, err = s.UserAndPasswordByEmail(ctx, "pw@example.com")
		require.NoError(t, err)
		require.Equal(t, "h2", hash)
		require.EqualValues(t, 1, count(t, s, "passwords"))

		// A re-hash loses to a change made meanwhile.
		wrote, err := s.ReplacePasswordHash(ctx, u.ID, "h1", "h1-rehashed")
		require.NoError(t, err)
		require.False(t, wrote)
		wrote, err = s.ReplacePasswordHash(ctx, u.ID, "h2", "h2-rehashed")
		require.NoError(t, err)
		require.True(t, wrote)
		hash, _ = s.PasswordHash(ctx, u.ID)
		require.Equal(t, "h2-rehashed", hash)

		require.ErrorIs(t, s.SetPasswordHash(ctx, "no-such-user", "h"), ErrNotFound)
		_, _, err = s.UserAndPasswordByEmail(ctx, "nobody@example.com")
		require.ErrorIs(t, err, ErrNotFound)

		require.NoError(t, s.DeletePassword(ctx, u.ID))
		require.NoError(t, s.DeletePassword(ctx, u.ID))
		_, err = s.PasswordHash(ctx, u.ID)
		require.ErrorIs(t, err, ErrNotFound)

		// The user's deletion takes the password with it.
		require.NoError(t, s.SetPasswordHash(ctx, u.ID, "h3"))
		_, err = s.DeleteUser(ctx, u.ID, time.Now())
		require.NoError(t, err)
		require.EqualValues(t, 0, count(t, s, "passwords"))
	})
}

func TestCreateUserWithPassword(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		u := &User{Email: ptr("new@example.com"), EmailVerified: &now}
		require.NoError(t, s.CreateUserWithPassword(ctx, u, "hash"))
		hash, err := s.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "hash", hash)

		err = s.CreateUserWithPassword(ctx, &User{Email: ptr("new@example.com")}, "other")
		require.ErrorIs(t, err, ErrConflict)
		require.EqualValues(t, 1, count(t, s, "users"), "a failure leaves no row")
		require.EqualValues(t, 1, count(t, s, "passwords"))
	})
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

		_, err = s.PurgeExpired(ctx, late.Add(2*time.Hour))
		require.NoError(t, err)
		require.EqualValues(t, 0, count(t, s, "password_throttles"))
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
