package openidstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// newRequest stores an auth request of client "app" expiring at exp.
func newRequest(t *testing.T, s *Store, id string, exp time.Time) *AuthRequest {
	t.Helper()
	maxAge := int64(300)
	r := &AuthRequest{ID: id, ClientID: "app", RedirectURI: "https://app.example.com/cb", Scopes: "openid email",
		State: "st", Nonce: "n", ResponseType: "code", ResponseMode: "query", CodeChallenge: "cc",
		CodeChallengeMethod: "S256", Prompt: "login consent", MaxAge: &maxAge, LoginHint: "a@example.com",
		UILocales: "fr en", Expires: exp}
	require.NoError(t, s.CreateAuthRequest(context.Background(), r))
	return r
}

func TestAuthRequests(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		exp := now.Add(10 * time.Minute)
		// A time in another zone, with nanoseconds, reads back as the instant
		// stored at the microsecond.
		newRequest(t, s, "r1", exp.In(time.FixedZone("X", 3600)))
		require.Error(t, s.CreateAuthRequest(ctx, &AuthRequest{ID: "r1", Expires: exp}), "an id is used once")

		got, err := s.AuthRequest(ctx, "r1", now)
		require.NoError(t, err)
		require.Equal(t, "app", got.ClientID)
		require.Equal(t, "https://app.example.com/cb", got.RedirectURI)
		require.Equal(t, "openid email", got.Scopes)
		require.Equal(t, "login consent", got.Prompt)
		require.Equal(t, "fr en", got.UILocales)
		require.NotNil(t, got.MaxAge)
		require.EqualValues(t, 300, *got.MaxAge)
		require.Nil(t, got.UserID)
		require.Nil(t, got.DoneAt)
		require.Nil(t, got.CodeHash)
		require.True(t, got.Expires.Equal(models.DBTime(exp)), "expires %v", got.Expires)
		require.False(t, got.CreatedAt.IsZero())

		for _, at := range []time.Time{exp, exp.Add(time.Second)} {
			_, err = s.AuthRequest(ctx, "r1", at)
			require.ErrorIs(t, err, models.ErrNotFound, "expired at %v", at)
		}
		_, err = s.AuthRequest(ctx, "missing", now)
		require.ErrorIs(t, err, models.ErrNotFound)

		require.NoError(t, s.AskedLogin(ctx, "r1", now))
		require.NoError(t, s.AskedLogin(ctx, "missing", now), "no-op")
		got, err = s.AuthRequest(ctx, "r1", now)
		require.NoError(t, err)
		require.NotNil(t, got.LoginAskedAt)
		require.True(t, got.LoginAskedAt.Equal(models.DBTime(now)))

		// A code only for a completed request.
		ok, err := s.SaveCode(ctx, "r1", "hash-1")
		require.NoError(t, err)
		require.False(t, ok, "not completed")
		_, err = s.AuthRequestByCode(ctx, "hash-1", now)
		require.ErrorIs(t, err, models.ErrNotFound)

		authTime := now.Add(-time.Minute)
		ok, err = s.CompleteAuthRequest(ctx, "r1", "user-1", authTime, "pwd otp", exp)
		require.NoError(t, err)
		require.False(t, ok, "expired")
		ok, err = s.CompleteAuthRequest(ctx, "missing", "user-1", authTime, "pwd", now)
		require.NoError(t, err)
		require.False(t, ok, "unknown")
		ok, err = s.CompleteAuthRequest(ctx, "r1", "user-1", authTime, "pwd otp", now)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.CompleteAuthRequest(ctx, "r1", "user-2", now, "pwd", now)
		require.NoError(t, err)
		require.False(t, ok, "completed already")
		got, err = s.AuthRequest(ctx, "r1", now)
		require.NoError(t, err)
		require.Equal(t, "user-1", *got.UserID, "the first completion stays")
		require.True(t, got.AuthTime.Equal(models.DBTime(authTime)))
		require.Equal(t, "pwd otp", got.AMR)
		require.True(t, got.DoneAt.Equal(models.DBTime(now)))

		ok, err = s.SaveCode(ctx, "r1", "hash-1")
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.SaveCode(ctx, "r1", "hash-2")
		require.NoError(t, err)
		require.False(t, ok, "a code is issued once")
		got, err = s.AuthRequestByCode(ctx, "hash-1", now)
		require.NoError(t, err)
		require.Equal(t, "r1", got.ID)
		_, err = s.AuthRequestByCode(ctx, "hash-2", now)
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.AuthRequestByCode(ctx, "hash-1", exp)
		require.ErrorIs(t, err, models.ErrNotFound, "expired")

		// A code hash is unique.
		newRequest(t, s, "r2", exp)
		ok, err = s.CompleteAuthRequest(ctx, "r2", "user-1", now, "pwd", now)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = s.SaveCode(ctx, "r2", "hash-1")
		require.ErrorIs(t, err, models.ErrConflict)

		ok, err = s.ExchangeCode(ctx, "r2", now, nil, nil)
		require.NoError(t, err)
		require.False(t, ok, "no code to exchange")
		ok, err = s.ExchangeCode(ctx, "r1", now, nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.ExchangeCode(ctx, "r1", now, nil, nil)
		require.NoError(t, err)
		require.False(t, ok, "a reuse")
		got, err = s.AuthRequestByCode(ctx, "hash-1", now)
		require.NoError(t, err, "an exchanged code is still found, to tell a reuse")
		require.True(t, got.ExchangedAt.Equal(models.DBTime(now)))
	})
}

func TestAuthRequestClaimRaces(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		newRequest(t, s, "r", now.Add(time.Minute))
		wins := raceWins(t, s, other, 8, func(i int, s *Store) (bool, error) {
			return s.CompleteAuthRequest(ctx, "r", fmt.Sprint("user-", i), now, "pwd", now)
		})
		require.EqualValues(t, 1, wins, "one completion")
		wins = raceWins(t, s, other, 8, func(i int, s *Store) (bool, error) {
			return s.SaveCode(ctx, "r", fmt.Sprint("hash-", i))
		})
		require.EqualValues(t, 1, wins, "one code")
		wins = raceWins(t, s, other, 8, func(_ int, s *Store) (bool, error) { return s.ExchangeCode(ctx, "r", now, nil, nil) })
		require.EqualValues(t, 1, wins, "one exchange")
	})
}

// TestGrantEndEndsItsRequests: revoking a user's grant to a client
// (DeleteConsent, RevokeGrants) ends the user's requests to it whose code
// is not exchanged — pending, or with a code handed out — so no code is
// issued or exchanged for them after; an exchanged one stays (a reuse is
// still told), and other clients' and users' requests are untouched.
func TestGrantEndEndsItsRequests(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		exp := now.Add(10 * time.Minute)
		request := func(id, user, client string, code, exchange bool) {
			t.Helper()
			r := newRequest(t, s, id, exp)
			require.NoError(t, s.db().Model(r).Update("client_id", client).Error)
			ok, err := s.CompleteAuthRequest(ctx, id, user, now, "pwd", now)
			require.True(t, ok, err)
			if code {
				ok, err = s.SaveCode(ctx, id, "hash-"+id)
				require.True(t, ok, err)
			}
			if exchange {
				ok, err = s.ExchangeCode(ctx, id, now, nil, nil)
				require.True(t, ok, err)
			}
		}
		alive := func(id string) bool {
			_, err := s.AuthRequest(ctx, id, now)
			return err == nil
		}
		u1 := newUser(t, s, "grant@example.com").ID // a consent needs a user row
		for _, end := range []struct {
			name string
			f    func(user, client string) error
		}{
			{"DeleteConsent", func(u, c string) error { _, err := s.DeleteConsent(ctx, u, c, now); return err }},
			{"RevokeGrants", func(u, c string) error { _, err := s.RevokeGrants(ctx, u, c, now); return err }},
		} {
			p := end.name + "-"
			request(p+"code", u1, "a", true, false)
			request(p+"done", u1, "a", false, false)
			request(p+"spent", u1, "a", true, true)
			request(p+"other-client", u1, "b", true, false)
			request(p+"other-user", "u2", "a", true, false)
			// The user had allowed the client (without a consent the
			// account page's revoke answers NotFound and changes nothing).
			require.NoError(t, s.SaveConsent(ctx, u1, "a", "openid", now))
			require.NoError(t, end.f(u1, "a"), end.name)
			require.False(t, alive(p+"code"), end.name)
			require.False(t, alive(p+"done"), end.name)
			require.True(t, alive(p+"spent"), "%s: an exchanged code is kept, to tell a reuse", end.name)
			require.True(t, alive(p+"other-client"), end.name)
			require.True(t, alive(p+"other-user"), end.name)
			ok, err := s.ExchangeCode(ctx, p+"code", now, nil, nil)
			require.NoError(t, err)
			require.False(t, ok, "%s: an ended request's code is not exchanged", end.name)
		}
	})
}

// TestEndAuthRequest: a request not completed ends (no longer found, not
// completed after); a completed one, or one ended already, is not.
func TestEndAuthRequest(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		newRequest(t, s, "open", now.Add(time.Minute))
		newRequest(t, s, "done", now.Add(time.Minute))
		ok, err := s.CompleteAuthRequest(ctx, "done", "u1", now, "pwd", now)
		require.True(t, ok, err)

		ok, err = s.EndAuthRequest(ctx, "open", now)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = s.AuthRequest(ctx, "open", now)
		require.ErrorIs(t, err, models.ErrNotFound)
		ok, err = s.CompleteAuthRequest(ctx, "open", "u1", now, "pwd", now)
		require.NoError(t, err)
		require.False(t, ok, "an ended request is not completed")
		for _, id := range []string{"open", "done", "missing"} {
			ok, err = s.EndAuthRequest(ctx, id, now)
			require.NoError(t, err)
			require.False(t, ok, id)
		}
		_, err = s.AuthRequest(ctx, "done", now)
		require.NoError(t, err, "a completed request goes on")
	})
}
