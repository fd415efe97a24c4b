package passkeystore

import (
	"context"
	"errors"
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

// The passkey store on both dialects: credential ids are unique across
// users, a challenge is answered once (by any instance) until purged after
// it expires, the counter never moves back, a refused removal removes
// nothing, and a deleted user's passkeys go with them.
func TestPasskeyStore(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, m *models.Store) {
		s := New(m)
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Second)
		u := &models.User{ID: models.NewID()}
		require.NoError(t, m.CreateUser(ctx, u))
		a := &models.Authenticator{UserID: u.ID, CredentialID: "cred-1", PublicKey: []byte{1, 2}, SignCount: 5, Transports: "internal", Name: "one", CreatedAt: now}
		require.NoError(t, s.AddAuthenticator(ctx, a))
		other := &models.User{ID: models.NewID()}
		require.NoError(t, m.CreateUser(ctx, other))
		dup := &models.Authenticator{UserID: other.ID, CredentialID: "cred-1", PublicKey: []byte{3}, CreatedAt: now}
		require.ErrorIs(t, s.AddAuthenticator(ctx, dup), models.ErrCredentialExists)

		require.NoError(t, s.UseChallenge(ctx, "h1", now.Add(time.Minute)))
		require.ErrorIs(t, s.UseChallenge(ctx, "h1", now.Add(time.Minute)), models.ErrChallengeUsed)
		n, err := m.PurgeExpired(ctx, now.Add(2*time.Minute))
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.NoError(t, s.UseChallenge(ctx, "h1", now.Add(3*time.Minute)), "a purged challenge's record is gone")

		require.ErrorIs(t, s.UseAuthenticator(ctx, a.ID, 4, false, now), models.ErrNotFound, "the counter never moves back")
		require.NoError(t, s.UseAuthenticator(ctx, a.ID, 6, true, now))
		got, err := s.AuthenticatorByCredentialID(ctx, "cred-1")
		require.NoError(t, err)
		require.EqualValues(t, 6, got.SignCount)
		require.True(t, got.BackupState)
		require.NotNil(t, got.LastUsedAt)

		refused := errors.New("last method")
		var seen models.SignInWays
		require.ErrorIs(t, s.RemoveAuthenticator(ctx, u.ID, a.ID, func(w models.SignInWays) error { seen = w; return refused }), refused)
		require.Equal(t, models.SignInWays{}, seen, "the ways left once it is gone: none")
		require.ErrorIs(t, s.RemoveAuthenticator(ctx, other.ID, a.ID, func(models.SignInWays) error { return nil }), models.ErrNotFound)
		list, err := s.AuthenticatorsOf(ctx, u.ID)
		require.NoError(t, err)
		require.Len(t, list, 1, "a refused removal removes nothing")

		_, err = m.DeleteUser(ctx, u.ID, now)
		require.NoError(t, err)
		_, err = s.AuthenticatorByCredentialID(ctx, "cred-1")
		require.ErrorIs(t, err, models.ErrNotFound, "a deleted user's passkeys are deleted")
	})
}
