package openidstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

func TestPurge(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "p@example.com")
		newRequest(t, s, "old", now.Add(-time.Second))
		newRequest(t, s, "new", now.Add(time.Second))
		a, r := pair("old", "fam-old", u.ID, "app", now.Add(-time.Second))
		require.NoError(t, s.CreateTokens(ctx, a, r))
		a, r = pair("new", "fam-new", u.ID, "app", now.Add(time.Second))
		require.NoError(t, s.CreateTokens(ctx, a, r))
		// Each rotation retires the key before it: k-old a second before now,
		// k-mid a second after.
		require.NoError(t, s.RotateKeys(ctx, []SigningKey{key("k-old", "RS256", now.Add(-time.Hour))}, now))
		require.NoError(t, s.RotateKeys(ctx, []SigningKey{key("k-mid", "RS256", now.Add(-time.Minute))}, now.Add(-time.Second)))
		require.NoError(t, s.RotateKeys(ctx, []SigningKey{key("k-new", "RS256", now)}, now.Add(time.Second)))
		// Clients whose rotation kept the previous secret: until a second
		// ago, until now (over: it counts only before its end), until a
		// second from now.
		for i, until := range []time.Time{now.Add(-time.Second), now, now.Add(time.Second)} {
			id := fmt.Sprintf("c%d", i)
			require.NoError(t, s.AddClient(ctx, &Client{ID: id, Name: id, SecretHash: "old"}))
			ok, err := s.RotateClientSecret(ctx, id, "new", until, now.Add(-time.Hour))
			require.NoError(t, err)
			require.True(t, ok)
		}

		n, err := s.Purge(ctx, now)
		require.NoError(t, err)
		require.EqualValues(t, 6, n, "one request, two tokens, one key, two previous secrets")
		for i, kept := range []bool{false, false, true} {
			c, err := s.Client(ctx, fmt.Sprintf("c%d", i))
			require.NoError(t, err)
			require.Equal(t, "new", c.SecretHash)
			if kept {
				require.Equal(t, "old", c.PreviousSecretHash, "an overlap still running")
				require.NotNil(t, c.PreviousSecretUntil)
				continue
			}
			require.Empty(t, c.PreviousSecretHash, "c%d: an ended overlap's hash is cleared", i)
			require.Nil(t, c.PreviousSecretUntil)
		}
		_, err = s.AuthRequest(ctx, "new", now)
		require.NoError(t, err)
		require.EqualValues(t, 1, count(t, s, "oidc_auth_requests"))
		_, err = s.Token(ctx, "a-old")
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.Token(ctx, "r-new")
		require.NoError(t, err)
		keys, err := s.SigningKeys(ctx, now)
		require.NoError(t, err)
		require.Equal(t, []string{"k-mid", "k-new"}, keyIDs(keys))
		require.EqualValues(t, 2, count(t, s, "oidc_signing_keys"))

		n, err = s.Purge(ctx, now)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestGoesWithUser(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, keep := newUser(t, s, "gone@example.com"), newUser(t, s, "keep@example.com")
		for _, x := range []*models.User{u, keep} {
			require.NoError(t, s.SaveConsent(ctx, x.ID, "app", "openid", now))
			a, r := pair(x.ID, "fam-"+x.ID, x.ID, "app", now.Add(time.Hour))
			require.NoError(t, s.CreateTokens(ctx, a, r))
		}
		got, err := s.UserByID(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, u.ID, got.ID)

		_, err = s.store.DeleteUser(ctx, u.ID, now)
		require.NoError(t, err)
		_, err = s.UserByID(ctx, u.ID)
		require.ErrorIs(t, err, models.ErrNotFound)
		require.EqualValues(t, 2, count(t, s, "oidc_tokens"), "the kept user's pair")
		require.EqualValues(t, 1, count(t, s, "oidc_consents"))
		_, err = s.Consent(ctx, keep.ID, "app")
		require.NoError(t, err)

		a, _ := pair("x", "fam-x", models.NewID(), "app", now)
		require.Error(t, s.CreateTokens(ctx, a, nil), "a token's user must exist")
	})
}
