package openidstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
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

		ok, err := s.SetClientSecret(ctx, "a", "sh2", now.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.Client(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, "sh2", got.SecretHash)
		require.True(t, got.UpdatedAt.Equal(models.DBTime(now.Add(time.Minute))))
		ok, err = s.SetClientSecret(ctx, "none", "x", now)
		require.NoError(t, err)
		require.False(t, ok)
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
