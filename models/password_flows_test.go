package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A pending sign-up is a token row and a password row, together; completing
// it creates the verified user with that password and spends every pending
// sign-up of the address; replaying it, or completing for an address that
// got a user meanwhile, changes nothing.
func TestPasswordSignUps(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx, now := context.Background(), time.Now()
		require.NoError(t, s.CreatePasswordSignUp(ctx, "new@example.com", "h-1", "phc-1", now.Add(time.Hour)))
		require.NoError(t, s.CreatePasswordSignUp(ctx, "new@example.com", "h-2", "phc-2", now.Add(time.Hour)))
		require.NoError(t, s.CreatePasswordSignUp(ctx, "old@example.com", "h-3", "phc-3", now.Add(-time.Second)))

		p, err := s.PasswordSignUpByHash(ctx, "h-1", now)
		require.NoError(t, err)
		require.Equal(t, "new@example.com", p.Email)
		require.Equal(t, "phc-1", p.PasswordHash)
		_, err = s.PasswordSignUpByHash(ctx, "h-3", now)
		require.ErrorIs(t, err, ErrNotFound, "expired")
		_, err = s.CompletePasswordSignUp(ctx, "h-3", now)
		require.ErrorIs(t, err, ErrNotFound, "expired")

		u, err := s.CompletePasswordSignUp(ctx, "h-2", now)
		require.NoError(t, err)
		require.NotNil(t, u.EmailVerified)
		hash, err := s.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "phc-2", hash)
		for _, h := range []string{"h-1", "h-2"} {
			_, err = s.CompletePasswordSignUp(ctx, h, now)
			require.ErrorIs(t, err, ErrNotFound, "spent: %s", h)
		}
		require.EqualValues(t, 1, count(t, s, "password_signups"), "only the expired one is left, for the purge")
		_, err = s.PurgeExpired(ctx, now)
		require.NoError(t, err)
		require.EqualValues(t, 0, count(t, s, "password_signups"), "purging the token purges its password")

		// An address that has a verified user: ErrConflict, the link stays, the user is untouched.
		// (An unverified one is the owner's proof's to take: TestOwnerProofWinsOverUnverifiedClaimant in app.)
		taken := newUser(t, s, "taken@example.com")
		require.NoError(t, s.db.Model(taken).Update("email_verified", dbTime(now)).Error)
		require.NoError(t, s.CreatePasswordSignUp(ctx, "taken@example.com", "h-4", "phc-4", now.Add(time.Hour)))
		_, err = s.CompletePasswordSignUp(ctx, "h-4", now)
		require.ErrorIs(t, err, ErrConflict)
		_, err = s.PasswordHash(ctx, taken.ID)
		require.ErrorIs(t, err, ErrNotFound)
		_, err = s.PasswordSignUpByHash(ctx, "h-4", now)
		require.NoError(t, err)

		require.NoError(t, s.DeletePasswordSignUp(ctx, "h-4"))
		require.EqualValues(t, 0, count(t, s, "password_signups"))
	})
}

// A reset spends its token and the user's others, sets the password, marks
// the address verified and ends every session; a change does the same only
// while the stored hash is the one the caller checked.
func TestPasswordResetAndChange(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx, now := context.Background(), time.Now()
		u := newUser(t, s, "r@example.com")
		other := newUser(t, s, "o@example.com")
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "s-1", SignedIn: now.Add(-time.Minute), Expires: now.Add(time.Hour)}))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: other.ID, TokenHash: "s-2", SignedIn: now.Add(-time.Minute), Expires: now.Add(time.Hour)}))
		require.NoError(t, s.CreatePasswordReset(ctx, u.ID, "r-1", now.Add(time.Minute)))
		require.NoError(t, s.CreatePasswordReset(ctx, u.ID, "r-2", now.Add(time.Minute)))

		id, err := s.PasswordResetByHash(ctx, "r-1", now)
		require.NoError(t, err)
		require.Equal(t, u.ID, id)
		_, err = s.PasswordResetByHash(ctx, "r-1", now.Add(time.Hour))
		require.ErrorIs(t, err, ErrNotFound, "expired")
		_, err = s.PasswordSignUpByHash(ctx, "r-1", now)
		require.ErrorIs(t, err, ErrNotFound, "a reset token is no sign-up")

		holder, ended, err := s.CompletePasswordReset(ctx, u.ID, "r-1", "phc-new", now)
		require.NoError(t, err)
		require.Equal(t, u.ID, holder, "the password is the user's")
		require.EqualValues(t, 1, ended)
		hash, err := s.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "phc-new", hash)
		got, err := s.UserByID(ctx, u.ID)
		require.NoError(t, err)
		require.NotNil(t, got.EmailVerified)
		require.GreaterOrEqual(t, revocationsOf(t, s)[u.ID], now.Unix(), "its JWT sessions are revoked")
		require.EqualValues(t, 1, count(t, s, "sessions"), "the other user's session stays")
		for _, h := range []string{"r-1", "r-2"} {
			_, _, err = s.CompletePasswordReset(ctx, u.ID, h, "phc-replayed", now)
			require.ErrorIs(t, err, ErrNotFound, "spent: %s", h)
		}

		_, err = s.ChangePassword(ctx, u.ID, "phc-stale", "phc-x", now)
		require.ErrorIs(t, err, ErrConflict)
		require.NoError(t, s.CreatePasswordReset(ctx, u.ID, "r-3", now.Add(time.Minute)))
		_, err = s.ChangePassword(ctx, u.ID, "phc-new", "phc-newer", now)
		require.NoError(t, err)
		hash, err = s.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "phc-newer", hash)
		_, err = s.PasswordResetByHash(ctx, "r-3", now)
		require.ErrorIs(t, err, ErrNotFound, "a reset link mailed before the change dies with the old password")
	})
}
