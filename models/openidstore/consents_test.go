package openidstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

func TestConsents(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, v := newUser(t, s, "u@example.com"), newUser(t, s, "v@example.com")
		_, err := s.Consent(ctx, u.ID, "a")
		require.ErrorIs(t, err, models.ErrNotFound)

		require.NoError(t, s.SaveConsent(ctx, u.ID, "a", "openid email email", now))
		c, err := s.Consent(ctx, u.ID, "a")
		require.NoError(t, err)
		require.Equal(t, "openid email", c.Scopes)
		require.True(t, c.CreatedAt.Equal(models.DBTime(now)))
		require.True(t, c.UpdatedAt.Equal(models.DBTime(now)))

		later := now.Add(time.Hour)
		require.NoError(t, s.SaveConsent(ctx, u.ID, "a", "profile openid offline_access", later))
		c, err = s.Consent(ctx, u.ID, "a")
		require.NoError(t, err)
		require.Equal(t, "openid email profile offline_access", c.Scopes, "widened, the old ones first")
		require.True(t, c.CreatedAt.Equal(models.DBTime(now)), "created when first given")
		require.True(t, c.UpdatedAt.Equal(models.DBTime(later)))
		require.NoError(t, s.SaveConsent(ctx, u.ID, "a", "email", later))
		c, err = s.Consent(ctx, u.ID, "a")
		require.NoError(t, err)
		require.Equal(t, "openid email profile offline_access", c.Scopes, "never narrowed")

		require.NoError(t, s.SaveConsent(ctx, u.ID, "b", "openid", now.Add(time.Minute)))
		require.NoError(t, s.SaveConsent(ctx, u.ID, "c", "openid", now.Add(2*time.Hour)))
		require.NoError(t, s.SaveConsent(ctx, v.ID, "a", "openid", now.Add(3*time.Hour)))
		list, err := s.Consents(ctx, u.ID)
		require.NoError(t, err)
		var ids []string
		for _, c := range list {
			require.Equal(t, u.ID, c.UserID)
			ids = append(ids, c.ClientID)
		}
		require.Equal(t, []string{"c", "a", "b"}, ids, "newest first")

		require.Error(t, s.SaveConsent(ctx, models.NewID(), "a", "openid", now), "the user must exist")
	})
}

func TestSaveConsentRace(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "r@example.com")
		const n = 8
		raceWins(t, s, other, n, func(i int, s *Store) (bool, error) {
			return true, s.SaveConsent(ctx, u.ID, "app", fmt.Sprint("openid s", i), now)
		})
		got, err := s.Consent(ctx, u.ID, "app")
		require.NoError(t, err)
		scopes := strings.Fields(got.Scopes)
		require.Len(t, scopes, n+1, "no scope lost to a racing save: %q", got.Scopes)
		for i := range n {
			require.Contains(t, scopes, fmt.Sprint("s", i))
		}
	})
}

func TestDeleteConsent(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, v := newUser(t, s, "u@example.com"), newUser(t, s, "v@example.com")
		exp := now.Add(time.Hour)
		for i, g := range []struct{ user, client string }{{u.ID, "a"}, {u.ID, "b"}, {v.ID, "a"}} {
			require.NoError(t, s.SaveConsent(ctx, g.user, g.client, "openid", now))
			a, r := pair(fmt.Sprint(i), fmt.Sprint("fam-", i), g.user, g.client, exp)
			require.NoError(t, s.CreateTokens(ctx, a, r))
		}
		ok, err := s.DeleteConsent(ctx, u.ID, "a", now)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = s.Consent(ctx, u.ID, "a")
		require.ErrorIs(t, err, models.ErrNotFound)
		for id, revoked := range map[string]bool{"a-0": true, "r-0": true, "a-1": false, "r-2": false} {
			tok, err := s.Token(ctx, id)
			require.NoError(t, err)
			require.Equal(t, revoked, tok.RevokedAt != nil, id)
		}
		_, err = s.Consent(ctx, u.ID, "b")
		require.NoError(t, err)
		_, err = s.Consent(ctx, v.ID, "a")
		require.NoError(t, err)

		ok, err = s.DeleteConsent(ctx, u.ID, "a", now)
		require.NoError(t, err)
		require.False(t, ok, "none left")
		// No consent (a first-party client's tokens need none): the account
		// page answers NotFound, and so nothing is revoked either.
		a, r := pair("9", "fam-9", u.ID, "first", exp)
		require.NoError(t, s.CreateTokens(ctx, a, r))
		ok, err = s.DeleteConsent(ctx, u.ID, "first", now)
		require.NoError(t, err)
		require.False(t, ok)
		tok, err := s.Token(ctx, "r-9")
		require.NoError(t, err)
		require.Nil(t, tok.RevokedAt, "revoked under a NotFound answer")
	})
}
