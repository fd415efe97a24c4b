package openidstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// pair is an access token and a refresh token (hash "h-"+id) of family,
// for userID and clientID, expiring at exp.
func pair(id, family, userID, clientID string, exp time.Time) (access, refresh *Token) {
	hash := "h-" + id
	access = &Token{ID: "a-" + id, Kind: KindAccess, FamilyID: family, UserID: userID, ClientID: clientID,
		Scopes: "openid offline_access", Audience: clientID, AuthTime: now, AMR: "pwd", Expires: exp}
	refresh = &Token{ID: "r-" + id, Kind: KindRefresh, TokenHash: &hash, FamilyID: family, UserID: userID,
		ClientID: clientID, Scopes: "openid offline_access", Audience: clientID, AuthTime: now, AMR: "pwd",
		Expires: exp}
	return access, refresh
}

func TestTokens(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "t@example.com")
		exp := now.Add(time.Hour)
		a, r := pair("1", "fam-1", u.ID, "app", exp.In(time.FixedZone("X", -7200)))
		require.NoError(t, s.CreateTokens(ctx, a, r))

		got, err := s.Token(ctx, "a-1")
		require.NoError(t, err)
		require.Equal(t, KindAccess, got.Kind)
		require.Nil(t, got.TokenHash)
		require.Equal(t, u.ID, got.UserID)
		require.Equal(t, "openid offline_access", got.Scopes)
		require.True(t, got.Expires.Equal(models.DBTime(exp)), "expires %v", got.Expires)
		require.True(t, got.AuthTime.Equal(models.DBTime(now)))
		require.False(t, got.CreatedAt.IsZero())
		got, err = s.RefreshToken(ctx, "h-1")
		require.NoError(t, err)
		require.Equal(t, "r-1", got.ID)
		require.Nil(t, got.UsedAt)
		require.Nil(t, got.RevokedAt)
		_, err = s.RefreshToken(ctx, "h-none")
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.Token(ctx, "none")
		require.ErrorIs(t, err, models.ErrNotFound)

		// An access token alone; a refresh hash used twice fails it all.
		a2, _ := pair("2", "fam-2", u.ID, "app", exp)
		require.NoError(t, s.CreateTokens(ctx, a2, nil))
		a3, r3 := pair("3", "fam-3", u.ID, "app", exp)
		r3.TokenHash = r.TokenHash
		require.ErrorIs(t, s.CreateTokens(ctx, a3, r3), models.ErrConflict)
		_, err = s.Token(ctx, "a-3")
		require.ErrorIs(t, err, models.ErrNotFound, "one transaction: the access token went too")
		require.EqualValues(t, 3, count(t, s, "oidc_tokens"))

		// Rotation: the old one is used, the new pair written.
		a4, r4 := pair("4", "fam-1", u.ID, "app", exp)
		ok, err := s.RotateRefresh(ctx, "r-1", now, a4, r4)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.RefreshToken(ctx, "h-1")
		require.NoError(t, err, "a used token is still found, to tell a reuse")
		require.NotNil(t, got.UsedAt)
		require.True(t, got.UsedAt.Equal(models.DBTime(now)))
		_, err = s.RefreshToken(ctx, "h-4")
		require.NoError(t, err)

		a5, r5 := pair("5", "fam-1", u.ID, "app", exp)
		ok, err = s.RotateRefresh(ctx, "r-1", now, a5, r5)
		require.NoError(t, err)
		require.False(t, ok, "used already")
		_, err = s.Token(ctx, "a-5")
		require.ErrorIs(t, err, models.ErrNotFound, "nothing written")
		ok, err = s.RotateRefresh(ctx, "none", now, a5, r5)
		require.NoError(t, err)
		require.False(t, ok)

		// Revocation.
		require.NoError(t, s.RevokeToken(ctx, "r-4", now))
		require.NoError(t, s.RevokeToken(ctx, "none", now))
		ok, err = s.RotateRefresh(ctx, "r-4", now, a5, r5)
		require.NoError(t, err)
		require.False(t, ok, "revoked")
		require.EqualValues(t, 5, count(t, s, "oidc_tokens"))
		later := now.Add(time.Minute)
		require.NoError(t, s.RevokeToken(ctx, "r-4", later))
		got, err = s.Token(ctx, "r-4")
		require.NoError(t, err)
		require.True(t, got.RevokedAt.Equal(models.DBTime(now)), "a revoked token keeps its time")

		n, err := s.RevokeFamily(ctx, "fam-1", later)
		require.NoError(t, err)
		require.EqualValues(t, 3, n, "a-1, r-1, a-4: r-4 was revoked")
		n, err = s.RevokeFamily(ctx, "fam-1", later)
		require.NoError(t, err)
		require.Zero(t, n)
		got, err = s.Token(ctx, "a-2")
		require.NoError(t, err)
		require.Nil(t, got.RevokedAt, "another family")
	})
}

func TestRevokeGrants(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, v := newUser(t, s, "u@example.com"), newUser(t, s, "v@example.com")
		exp := now.Add(time.Hour)
		for i, g := range []struct{ user, client string }{{u.ID, "a"}, {u.ID, "b"}, {v.ID, "a"}} {
			a, r := pair(fmt.Sprint(i), fmt.Sprint("fam-", i), g.user, g.client, exp)
			require.NoError(t, s.CreateTokens(ctx, a, r))
		}
		n, err := s.RevokeGrants(ctx, u.ID, "a", now)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		n, err = s.RevokeGrants(ctx, u.ID, "", now)
		require.NoError(t, err)
		require.EqualValues(t, 2, n, "client b's; client a's were revoked")
		got, err := s.Token(ctx, "a-2")
		require.NoError(t, err)
		require.Nil(t, got.RevokedAt, "another user's")
		n, err = s.RevokeGrants(ctx, v.ID, "b", now)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestRotateRefreshRace(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "r@example.com")
		exp := now.Add(time.Hour)
		a, r := pair("0", "fam", u.ID, "app", exp)
		require.NoError(t, s.CreateTokens(ctx, a, r))
		wins := raceWins(t, s, other, 8, func(i int, s *Store) (bool, error) {
			a, r := pair(fmt.Sprint(i+1), "fam", u.ID, "app", exp)
			return s.RotateRefresh(ctx, "r-0", now, a, r)
		})
		require.EqualValues(t, 1, wins, "one refresh token, one new pair")
		require.EqualValues(t, 4, count(t, s, "oidc_tokens"), "the losers wrote nothing")
	})
}

func TestRevokedNotBefore(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, v := newUser(t, s, "u@example.com"), newUser(t, s, "v@example.com")
		at, err := s.RevokedNotBefore(ctx, u.ID)
		require.NoError(t, err)
		require.True(t, at.IsZero(), "none: %v", at)

		put := func(userID string, sec int64) {
			t.Helper()
			require.NoError(t, s.db().Save(&models.SessionRevocation{UserID: userID, NotBefore: sec}).Error)
		}
		put(v.ID, 3000)
		at, err = s.RevokedNotBefore(ctx, u.ID)
		require.NoError(t, err)
		require.True(t, at.IsZero(), "another user's: %v", at)
		put(u.ID, 2000)
		at, err = s.RevokedNotBefore(ctx, u.ID)
		require.NoError(t, err)
		require.True(t, at.Equal(time.Unix(2000, 0)), "%v", at)
		put(models.AllUsers, 2500)
		at, err = s.RevokedNotBefore(ctx, u.ID)
		require.NoError(t, err)
		require.True(t, at.Equal(time.Unix(2500, 0)), "everyone's is later: %v", at)
		at, err = s.RevokedNotBefore(ctx, v.ID)
		require.NoError(t, err)
		require.True(t, at.Equal(time.Unix(3000, 0)), "the user's is later: %v", at)
	})
}
