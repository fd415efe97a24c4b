package accountstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

var acNow = time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.UTC)

func session(t *testing.T, s *Store, u *models.User, hash, device string, signedIn, expires time.Time) {
	t.Helper()
	require.NoError(t, s.store.CreateSession(context.Background(), models.NewSession{UserID: u.ID, TokenHash: hash,
		Device: device, Network: "203.0.113.0/24", SignedIn: signedIn, Expires: expires}))
}

func hashesOf(list []SessionRecord) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.TokenHash
	}
	return out
}

func TestSessionsOfUser(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, other := newUser(t, s, "u@example.com"), newUser(t, s, "o@example.com")
		session(t, s, u, "older", "Firefox 128 on Linux", acNow.Add(-2*time.Hour), acNow.Add(time.Hour))
		session(t, s, u, "newer", "Safari 17 on iOS", acNow.Add(-time.Hour), acNow.Add(time.Hour))
		session(t, s, u, "expired", "Chrome", acNow.Add(-3*time.Hour), acNow.Add(-time.Second))
		session(t, s, other, "theirs", "Edge", acNow, acNow.Add(time.Hour))
		require.NoError(t, s.store.ExtendSession(ctx, "older", acNow.Add(2*time.Hour), acNow.Add(-time.Minute)))

		list, err := s.SessionsOfUser(ctx, u.ID, acNow)
		require.NoError(t, err)
		require.Equal(t, []string{"newer", "older"}, hashesOf(list), "live ones only, newest first, this user's only")
		older := list[1]
		require.Len(t, older.ID, 36)
		require.Equal(t, "Firefox 128 on Linux", older.Device)
		require.Equal(t, "203.0.113.0/24", older.Network)
		require.True(t, older.CreatedAt.Equal(acNow.Add(-2*time.Hour)), "created %v", older.CreatedAt)
		require.NotNil(t, older.LastSeen)
		require.True(t, older.LastSeen.Equal(acNow.Add(-time.Minute)), "last seen %v", older.LastSeen)
		require.True(t, older.Expires.Equal(acNow.Add(2*time.Hour)))

		list, err = s.SessionsOfUser(ctx, models.NewID(), acNow)
		require.NoError(t, err)
		require.Empty(t, list)
	})
}

func TestDeleteUserSession(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, other := newUser(t, s, "u@example.com"), newUser(t, s, "o@example.com")
		session(t, s, u, "mine", "", acNow, acNow.Add(time.Hour))
		session(t, s, other, "theirs", "", acNow, acNow.Add(time.Hour))
		theirs, err := s.SessionsOfUser(ctx, other.ID, acNow)
		require.NoError(t, err)
		mine, err := s.SessionsOfUser(ctx, u.ID, acNow)
		require.NoError(t, err)

		ok, err := s.DeleteUserSession(ctx, u.ID, theirs[0].ID)
		require.NoError(t, err)
		require.False(t, ok, "another user's session id is refused")
		ok, err = s.DeleteUserSession(ctx, u.ID, "no-such-id")
		require.NoError(t, err)
		require.False(t, ok)
		require.EqualValues(t, 2, count(t, s, "sessions"), "a refusal deletes nothing")

		ok, err = s.DeleteUserSession(ctx, u.ID, mine[0].ID)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.DeleteUserSession(ctx, u.ID, mine[0].ID)
		require.NoError(t, err)
		require.False(t, ok, "ended once")
		_, err = s.store.SessionAndUser(ctx, "mine")
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.store.SessionAndUser(ctx, "theirs")
		require.NoError(t, err)
	})
}

func TestDeleteOtherSessions(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, other := newUser(t, s, "u@example.com"), newUser(t, s, "o@example.com")
		for _, h := range []string{"this", "a", "b"} {
			session(t, s, u, h, "", acNow, acNow.Add(time.Hour))
		}
		session(t, s, other, "theirs", "", acNow, acNow.Add(time.Hour))
		n, err := s.DeleteOtherSessions(ctx, u.ID, "this")
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		list, err := s.SessionsOfUser(ctx, u.ID, acNow)
		require.NoError(t, err)
		require.Equal(t, []string{"this"}, hashesOf(list))
		n, err = s.DeleteOtherSessions(ctx, u.ID, "this")
		require.NoError(t, err)
		require.Zero(t, n)
		_, err = s.store.SessionAndUser(ctx, "theirs")
		require.NoError(t, err, "another user's sessions stay")
	})
}

func TestUnlinkAccount(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, other := newUser(t, s, "u@example.com"), newUser(t, s, "o@example.com")
		label := "octocat"
		mine := &models.Account{UserID: u.ID, Type: "oauth", Provider: "github", ProviderAccountID: "1", Label: &label}
		theirs := &models.Account{UserID: other.ID, Type: "oauth", Provider: "github", ProviderAccountID: "2"}
		require.NoError(t, s.store.LinkAccount(ctx, mine))
		require.NoError(t, s.store.LinkAccount(ctx, theirs))
		accs, err := s.store.AccountsOf(ctx, u.ID)
		require.NoError(t, err)
		require.Len(t, accs, 1)
		require.NotNil(t, accs[0].Label)
		require.Equal(t, "octocat", *accs[0].Label, "the label is stored")

		allow := func(models.SignInWays) error { return nil }
		ok, err := s.UnlinkAccount(ctx, u.ID, theirs.ID, allow)
		require.NoError(t, err)
		require.False(t, ok, "another user's account id is refused")
		require.EqualValues(t, 2, count(t, s, "accounts"), "a refusal deletes nothing")
		// keep sees the ways left once it is gone, and its refusal undoes it.
		last := errors.New("last way in")
		var seen models.SignInWays
		_, err = s.UnlinkAccount(ctx, u.ID, mine.ID, func(w models.SignInWays) error { seen = w; return last })
		require.ErrorIs(t, err, last)
		require.Equal(t, "u@example.com", seen.Email)
		require.Zero(t, seen.Accounts+seen.Passkeys, "its own identity is gone, the other user's is not counted")
		require.False(t, seen.Password)
		require.EqualValues(t, 2, count(t, s, "accounts"), "a refused unlink deletes nothing")
		ok, err = s.UnlinkAccount(ctx, u.ID, mine.ID, allow)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.UnlinkAccount(ctx, u.ID, mine.ID, allow)
		require.NoError(t, err)
		require.False(t, ok)
		accs, err = s.store.AccountsOf(ctx, other.ID)
		require.NoError(t, err)
		require.Len(t, accs, 1)
	})
}
