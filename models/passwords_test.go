package models

import (
	"context"
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
