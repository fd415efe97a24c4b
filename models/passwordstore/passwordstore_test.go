package passwordstore

import (
	"context"
	"os"
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

// notBefore is the user's recorded "not before" time for JWT sessions.
func notBefore(t *testing.T, m *models.Store, userID string) int64 {
	t.Helper()
	rows, err := m.Revocations(context.Background())
	require.NoError(t, err)
	for _, r := range rows {
		if r.UserID == userID {
			return r.NotBefore
		}
	}
	return 0
}

// The password flows' tables are the schema's (models/schema).
func TestMigrationsMatchModels(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, m *models.Store) {
		storetest.RequireMigrated(t, m, &PasswordSignUp{})
	})
}

// A pending sign-up is a token row and a password row, together; completing
// it creates the verified user with that password and spends every pending
// sign-up of the address; replaying it, or completing for an address that
// got a user meanwhile, changes nothing.
func TestPasswordSignUps(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, m *models.Store) {
		s := New(m)
		ctx, now := context.Background(), time.Now()
		require.NoError(t, s.CreatePasswordSignUp(ctx, "new@example.com", "h-1", "phc-1", now.Add(time.Hour)))
		require.NoError(t, s.CreatePasswordSignUp(ctx, "new@example.com", "h-2", "phc-2", now.Add(time.Hour)))
		require.NoError(t, s.CreatePasswordSignUp(ctx, "old@example.com", "h-3", "phc-3", now.Add(-time.Second)))

		p, err := s.PasswordSignUpByHash(ctx, "h-1", now)
		require.NoError(t, err)
		require.Equal(t, "new@example.com", p.Email)
		require.Equal(t, "phc-1", p.PasswordHash)
		_, err = s.PasswordSignUpByHash(ctx, "h-3", now)
		require.ErrorIs(t, err, models.ErrNotFound, "expired")
		_, err = s.CompletePasswordSignUp(ctx, "h-3", now)
		require.ErrorIs(t, err, models.ErrNotFound, "expired")

		done, err := s.CompletePasswordSignUp(ctx, "h-2", now)
		require.NoError(t, err)
		require.False(t, done.Claimed)
		u := done.User
		require.NotNil(t, u.EmailVerified)
		hash, err := m.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "phc-2", hash)
		for _, h := range []string{"h-1", "h-2"} {
			_, err = s.CompletePasswordSignUp(ctx, h, now)
			require.ErrorIs(t, err, models.ErrNotFound, "spent: %s", h)
		}
		require.EqualValues(t, 1, storetest.Count(t, m, "password_signups"), "only the expired one is left, for the purge")
		_, err = m.PurgeExpired(ctx, now)
		require.NoError(t, err)
		require.EqualValues(t, 0, storetest.Count(t, m, "password_signups"), "purging the token purges its password")

		// An address that has a verified user: models.ErrConflict, the link stays, the user is untouched.
		// (An unverified one is the owner's proof's to take: TestOwnerProofWinsOverUnverifiedClaimant in app.)
		taken := storetest.NewUser(t, m, "taken@example.com")
		require.NoError(t, m.DB().Model(taken).Update("email_verified", models.DBTime(now)).Error)
		require.NoError(t, s.CreatePasswordSignUp(ctx, "taken@example.com", "h-4", "phc-4", now.Add(time.Hour)))
		_, err = s.CompletePasswordSignUp(ctx, "h-4", now)
		require.ErrorIs(t, err, models.ErrConflict)
		_, err = m.PasswordHash(ctx, taken.ID)
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.PasswordSignUpByHash(ctx, "h-4", now)
		require.NoError(t, err)

		require.NoError(t, s.DeletePasswordSignUp(ctx, "h-4"))
		require.EqualValues(t, 0, storetest.Count(t, m, "password_signups"))

		// An unverified user with no way to sign in is claimed: verified,
		// with the password, and its sessions end as after a reset.
		held := storetest.NewUser(t, m, "held@example.com")
		require.NoError(t, m.CreateSession(ctx, models.NewSession{UserID: held.ID, TokenHash: "s-held", SignedIn: now.Add(-time.Minute), Expires: now.Add(time.Hour)}))
		require.NoError(t, s.CreatePasswordSignUp(ctx, "held@example.com", "h-5", "phc-5", now.Add(time.Hour)))
		done, err = s.CompletePasswordSignUp(ctx, "h-5", now)
		require.NoError(t, err)
		require.True(t, done.Claimed)
		require.Equal(t, held.ID, done.User.ID)
		require.EqualValues(t, 1, done.Ended)
		require.Zero(t, storetest.Count(t, m, "sessions"), "the claimed user's database session ends")
		require.GreaterOrEqual(t, notBefore(t, m, held.ID), now.Unix(), "and its JWT sessions are revoked")
	})
}

// A reset spends its token and the user's others, sets the password, marks
// the address verified and ends every session; a change does the same only
// while the stored hash is the one the caller checked.
func TestPasswordResetAndChange(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, m *models.Store) {
		s := New(m)
		ctx, now := context.Background(), time.Now()
		u := storetest.NewUser(t, m, "r@example.com")
		other := storetest.NewUser(t, m, "o@example.com")
		require.NoError(t, m.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: "s-1", SignedIn: now.Add(-time.Minute), Expires: now.Add(time.Hour)}))
		require.NoError(t, m.CreateSession(ctx, models.NewSession{UserID: other.ID, TokenHash: "s-2", SignedIn: now.Add(-time.Minute), Expires: now.Add(time.Hour)}))
		require.NoError(t, s.CreatePasswordReset(ctx, u.ID, "r-1", now.Add(time.Minute)))
		require.NoError(t, s.CreatePasswordReset(ctx, u.ID, "r-2", now.Add(time.Minute)))

		id, err := s.PasswordResetByHash(ctx, "r-1", now)
		require.NoError(t, err)
		require.Equal(t, u.ID, id)
		_, err = s.PasswordResetByHash(ctx, "r-1", now.Add(time.Hour))
		require.ErrorIs(t, err, models.ErrNotFound, "expired")
		_, err = s.PasswordSignUpByHash(ctx, "r-1", now)
		require.ErrorIs(t, err, models.ErrNotFound, "a reset token is no sign-up")

		holder, ended, err := s.CompletePasswordReset(ctx, u.ID, "r-1", "phc-new", now)
		require.NoError(t, err)
		require.Equal(t, u.ID, holder, "the password is the user's")
		require.EqualValues(t, 1, ended)
		hash, err := m.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "phc-new", hash)
		got, err := m.UserByID(ctx, u.ID)
		require.NoError(t, err)
		require.NotNil(t, got.EmailVerified)
		require.GreaterOrEqual(t, notBefore(t, m, u.ID), now.Unix(), "its JWT sessions are revoked")
		require.EqualValues(t, 1, storetest.Count(t, m, "sessions"), "the other user's session stays")
		for _, h := range []string{"r-1", "r-2"} {
			_, _, err = s.CompletePasswordReset(ctx, u.ID, h, "phc-replayed", now)
			require.ErrorIs(t, err, models.ErrNotFound, "spent: %s", h)
		}

		_, err = s.ChangePassword(ctx, u.ID, "phc-stale", "phc-x", now)
		require.ErrorIs(t, err, models.ErrConflict)
		require.NoError(t, s.CreatePasswordReset(ctx, u.ID, "r-3", now.Add(time.Minute)))
		changed := now.Add(48 * time.Hour) // the service's clock, not the host's
		_, err = s.ChangePassword(ctx, u.ID, "phc-new", "phc-newer", changed)
		require.NoError(t, err)
		hash, err = m.PasswordHash(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "phc-newer", hash)
		var row models.Password
		require.NoError(t, m.DB().Where("user_id = ?", u.ID).Take(&row).Error)
		require.WithinDuration(t, changed, row.UpdatedAt, time.Millisecond, "updated_at is the change's time")
		_, err = s.PasswordResetByHash(ctx, "r-3", now)
		require.ErrorIs(t, err, models.ErrNotFound, "a reset link mailed before the change dies with the old password")
	})
}
