package openidstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

func TestClients(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		_, err := s.Client(ctx, "a")
		require.ErrorIs(t, err, models.ErrNotFound)
		list, err := s.Clients(ctx)
		require.NoError(t, err)
		require.Empty(t, list)

		a := &Client{ID: "a", Name: "App A", SecretHash: "sh", RedirectURIs: "https://a/cb https://a/cb2",
			PostLogoutRedirectURIs: "https://a/", Scopes: "openid email", FirstParty: true, RefreshTokens: true,
			CreatedAt: now}
		require.NoError(t, s.AddClient(ctx, a))
		require.NoError(t, s.AddClient(ctx, &Client{ID: "b", Name: "B", Public: true, CreatedAt: now.Add(-time.Hour)}))
		err = s.AddClient(ctx, &Client{ID: "a", Name: "again"})
		require.ErrorIs(t, err, models.ErrConflict)
		require.Contains(t, err.Error(), `"a"`, "the error names the id")
		require.NotContains(t, err.Error(), "UNIQUE", "not the driver's words")

		got, err := s.Client(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "App A", got.Name, "the duplicate changed nothing")
		require.Equal(t, "sh", got.SecretHash)
		require.False(t, got.Public)
		require.True(t, got.FirstParty)
		require.True(t, got.RefreshTokens)
		require.Equal(t, "https://a/cb https://a/cb2", got.RedirectURIs)
		require.Equal(t, "https://a/", got.PostLogoutRedirectURIs)
		require.Equal(t, "openid email", got.Scopes)
		require.True(t, got.CreatedAt.Equal(models.DBTime(now)))
		list, err = s.Clients(ctx)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, "b", list[0].ID, "oldest first")
		require.True(t, list[0].Public)

		// A rotation that keeps the previous hash, until a time.
		later, until := now.Add(time.Minute), now.Add(25*time.Hour)
		ok, err := s.RotateClientSecret(ctx, "a", "sh2", until, later)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.Client(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "sh2", got.SecretHash)
		require.Equal(t, "sh", got.PreviousSecretHash)
		require.NotNil(t, got.PreviousSecretUntil)
		require.True(t, got.PreviousSecretUntil.Equal(models.DBTime(until)))
		require.True(t, got.UpdatedAt.Equal(models.DBTime(later)))
		// Another keeps only the hash it replaces.
		ok, err = s.RotateClientSecret(ctx, "a", "sh3", until, later)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.Client(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "sh3", got.SecretHash)
		require.Equal(t, "sh2", got.PreviousSecretHash)
		// One that keeps none (an end not after now) clears it.
		ok, err = s.RotateClientSecret(ctx, "a", "sh4", later, later)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.Client(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "sh4", got.SecretHash)
		require.Empty(t, got.PreviousSecretHash)
		require.Nil(t, got.PreviousSecretUntil)
		ok, err = s.RotateClientSecret(ctx, "none", "x", until, now)
		require.NoError(t, err)
		require.False(t, ok)
		got, err = s.Client(ctx, "b")
		require.NoError(t, err)
		require.Empty(t, got.SecretHash, "another client is untouched")
		require.Empty(t, got.PreviousSecretHash)

		// EndPreviousSecret clears a kept hash, once.
		_, err = s.RotateClientSecret(ctx, "a", "sh5", until, later)
		require.NoError(t, err)
		ended := later.Add(time.Minute)
		ok, err = s.EndPreviousSecret(ctx, "a", ended)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.Client(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "sh5", got.SecretHash, "the current secret stays")
		require.Empty(t, got.PreviousSecretHash)
		require.Nil(t, got.PreviousSecretUntil)
		require.True(t, got.UpdatedAt.Equal(models.DBTime(ended)))
		for _, id := range []string{"a", "b", "none"} {
			ok, err = s.EndPreviousSecret(ctx, id, ended)
			require.NoError(t, err)
			require.False(t, ok, "%s: none to end", id)
		}
	})
}

// Schema step 17 (the previous secret of a rotation) upgrades a database
// of step 16 with a stored client: the client keeps its secret and has no
// previous one, and can be rotated with an overlap.
func TestStep17UpgradesStoredClients(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		ctx := context.Background()
		s := connect(t, c)
		db := s.db()
		for _, col := range []string{"previous_secret_hash", "previous_secret_until"} {
			require.NoError(t, db.Exec("ALTER TABLE oidc_clients DROP COLUMN "+col).Error)
		}
		require.NoError(t, db.Exec("DELETE FROM schema_migrations WHERE version = 17").Error)
		require.NoError(t, db.Exec(`INSERT INTO oidc_clients (id, name, secret_hash, public, redirect_uris, post_logout_redirect_uris,
			scopes, first_party, refresh_tokens, created_at, updated_at) VALUES ('old', 'Old', 'sh', ?, 'https://a/cb', '', 'openid', ?, ?, ?, ?)`,
			false, false, false, models.DBTime(now), models.DBTime(now)).Error)
		st, err := s.store.Status(ctx)
		require.NoError(t, err)
		require.Len(t, st.Pending, 1)

		require.NoError(t, s.store.Migrate(ctx))
		require.NoError(t, s.store.Migrate(ctx), "a later start finds the step applied")
		storetest.RequireMigrated(t, s.store, &Client{})
		got, err := s.Client(ctx, "old")
		require.NoError(t, err)
		require.Equal(t, "sh", got.SecretHash)
		require.Empty(t, got.PreviousSecretHash)
		require.Nil(t, got.PreviousSecretUntil)
		ok, err := s.RotateClientSecret(ctx, "old", "sh2", now.Add(time.Hour), now)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.Client(ctx, "old")
		require.NoError(t, err)
		require.Equal(t, "sh", got.PreviousSecretHash)
	})
}

func TestRemoveClient(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "u@example.com")
		exp := now.Add(time.Hour)
		for _, id := range []string{"app", "other"} {
			require.NoError(t, s.AddClient(ctx, &Client{ID: id, Name: id}))
			require.NoError(t, s.SaveConsent(ctx, u.ID, id, "openid", now))
			a, r := pair(id, "fam-"+id, u.ID, id, exp)
			require.NoError(t, s.CreateTokens(ctx, a, r))
			req := newRequest(t, s, "req-"+id, exp)
			require.NoError(t, s.db().Model(req).Update("client_id", id).Error)
		}
		// A client of config.yaml ("cfg") is not stored: removing it is
		// refused and leaves its grants.
		require.NoError(t, s.SaveConsent(ctx, u.ID, "cfg", "openid", now))
		ok, err := s.RemoveClient(ctx, "cfg")
		require.NoError(t, err)
		require.False(t, ok)
		_, err = s.Consent(ctx, u.ID, "cfg")
		require.NoError(t, err)

		ok, err = s.RemoveClient(ctx, "app")
		require.NoError(t, err)
		require.True(t, ok)
		_, err = s.Client(ctx, "app")
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.Consent(ctx, u.ID, "app")
		require.ErrorIs(t, err, models.ErrNotFound)
		for _, id := range []string{"a-app", "r-app"} {
			_, err = s.Token(ctx, id)
			require.ErrorIs(t, err, models.ErrNotFound, id)
		}
		_, err = s.AuthRequest(ctx, "req-app", now)
		require.ErrorIs(t, err, models.ErrNotFound)

		// The other client keeps everything.
		_, err = s.Client(ctx, "other")
		require.NoError(t, err)
		_, err = s.Consent(ctx, u.ID, "other")
		require.NoError(t, err)
		_, err = s.Token(ctx, "r-other")
		require.NoError(t, err)
		_, err = s.AuthRequest(ctx, "req-other", now)
		require.NoError(t, err)

		ok, err = s.RemoveClient(ctx, "app")
		require.NoError(t, err)
		require.False(t, ok)
	})
}
