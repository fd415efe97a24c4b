package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

var isoMillis = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// requireCleared checks that the response clears the named cookie (Max-Age=0).
func requireCleared(t *testing.T, h http.Header, name string) {
	t.Helper()
	c, ok := findCookie(h, name)
	require.True(t, ok, "want %s cleared in %v", name, h.Values("Set-Cookie"))
	require.Empty(t, c.Value)
	require.Less(t, c.MaxAge, 0, "Max-Age=0: %s", c.raw)
	require.Contains(t, c.raw, "Max-Age=0")
	require.Equal(t, "/", c.Path)
}

func TestSessionEmpty(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startEnv(t, envOpts{strategy: strategy})
			res := e.get(e.client, "/session")
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Equal(t, "{}", strings.TrimSpace(res.body))
			require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"))
			requireNoStore(t, res.Header)
			_, set := findCookie(res.Header, "next-auth.session-token")
			require.False(t, set, "no session cookie is touched when none was sent")
		})
	}
}

func TestSessionGarbageCookies(t *testing.T) {
	garbage := []string{
		"garbage",
		"",
		strings.Repeat("A", 8000),
		"eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAAA.BBBB.CCCC",
		"a.b.c.d.e",
		models.NewID(), // well-formed but unknown database token
		"%zz",
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startEnv(t, b.opts(envOpts{}))
			before := e.counts()
			for _, g := range garbage {
				res := e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+g, nil)
				require.Equal(t, http.StatusOK, res.StatusCode, "%.40q", g)
				require.Equal(t, "{}", strings.TrimSpace(res.body))
				requireCleared(t, res.Header, "next-auth.session-token")
			}
			// Every chunk of a chunked garbage cookie is cleared.
			res := e.rawDo(http.MethodGet, "/session",
				"next-auth.session-token.0=abc; next-auth.session-token.1=def; next-auth.session-token.2=ghi", nil)
			require.Equal(t, "{}", strings.TrimSpace(res.body))
			for _, n := range []string{"next-auth.session-token.0", "next-auth.session-token.1", "next-auth.session-token.2"} {
				requireCleared(t, res.Header, n)
			}
			require.Equal(t, before, e.counts())
		})
	}
}

func TestSessionDatabase(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startEnv(t, envOpts{postgres: pg})
		u := e.addUser("Ada Lovelace", "ada@example.com", "https://img.example.com/ada.png")
		expires := time.Now().Add(10 * 24 * time.Hour).UTC()
		tok := e.addDBSession(u, expires)

		e.setJarCookie(e.client, "next-auth.session-token", tok)
		res := e.get(e.client, "/session")
		require.Equal(t, http.StatusOK, res.StatusCode)
		requireNoStore(t, res.Header)
		body := res.json(t)
		require.Equal(t, map[string]any{
			"user": map[string]any{
				"name":  "Ada Lovelace",
				"email": "ada@example.com",
				"image": "https://img.example.com/ada.png",
			},
			"expires": expires.Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z"),
		}, body)
		require.Regexp(t, isoMillis, body["expires"])

		// The session cookie is re-issued with the same token and an expiry of now+max_age.
		c, ok := findCookie(res.Header, "next-auth.session-token")
		require.True(t, ok)
		require.Equal(t, tok, c.Value)
		require.True(t, c.HttpOnly)
		require.Equal(t, "/", c.Path)
		require.Equal(t, http.SameSiteLaxMode, c.SameSite)
		require.WithinDuration(t, time.Now().Add(30*24*time.Hour), c.Expires, time.Minute)

		// null fields stay null (next-auth keeps them).
		u2 := e.addUser("", "nobody@example.com", "")
		tok2 := e.addDBSession(u2, expires)
		res = e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok2, nil)
		require.JSONEq(t, `{"user":{"name":null,"email":"nobody@example.com","image":null},"expires":"`+
			expires.Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")+`"}`, res.body)
		require.NotContains(t, res.body, `"id"`, "user.id is hidden unless expose_user_id")
	})
}

func TestSessionExposeUserID(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) { c.Callbacks.ExposeUserID = true }})
	u := e.addUser("A", "a@example.com", "")
	tok := e.addDBSession(u, time.Now().Add(time.Hour))
	res := e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok, nil)
	require.Equal(t, u.ID, res.json(t)["user"].(map[string]any)["id"])
}

func TestSessionDatabaseExpired(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startEnv(t, envOpts{postgres: pg})
		u := e.addUser("Old", "old@example.com", "")
		tok := e.addDBSession(u, time.Now().Add(-time.Minute))
		require.EqualValues(t, 1, e.counts().Sessions)

		res := e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok, nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "{}", strings.TrimSpace(res.body))
		requireCleared(t, res.Header, "next-auth.session-token")
		require.EqualValues(t, 0, e.counts().Sessions, "the expired row is deleted")
		require.EqualValues(t, 1, e.counts().Users, "the user stays")
	})
}

func TestSessionDatabaseSliding(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		clock := &testClock{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
		// max_age 720h, update_age 24h; an absolute limit far enough away that
		// it does not cap the extension (the default equals max_age, so would).
		e := startEnv(t, envOpts{clock: clock, postgres: pg, config: func(c *config.Config) {
			c.Session.AbsoluteMaxAge = config.Duration(90 * 24 * time.Hour)
		}})
		store := e.app.Store()
		u := e.addUser("S", "s@example.com", "")
		start := clock.Now().Add(30 * 24 * time.Hour)
		tok := e.addDBSession(u, start)
		expiresInDB := func() time.Time {
			row, err := store.SessionAndUser(context.Background(), session.HashToken(tok))
			require.NoError(t, err)
			return row.Expires.UTC()
		}
		get := func() map[string]any {
			return e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok, nil).json(t)
		}

		clock.Add(23 * time.Hour)
		require.Equal(t, start.Format("2006-01-02T15:04:05.000Z"), get()["expires"])
		require.True(t, start.Equal(expiresInDB()), "not due yet: no write")

		clock.Add(time.Hour) // exactly update_age later: due
		get()
		extended := expiresInDB()
		require.True(t, clock.Now().Add(30*24*time.Hour).Equal(extended), "extended to now+max_age: %v", extended)

		clock.Add(time.Hour)
		get()
		require.True(t, extended.Equal(expiresInDB()), "at most one write per update_age")
	})
}

func TestSessionJWT(t *testing.T) {
	e := startEnv(t, envOpts{strategy: config.StrategyJWT})
	tok := jwtCookie(t, map[string]any{"name": "Jo", "email": "jo@example.com", "picture": "https://img.example.com/jo.png", "sub": "user-1"}, time.Now())
	res := e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	body := res.json(t)
	require.Equal(t, map[string]any{"name": "Jo", "email": "jo@example.com", "image": "https://img.example.com/jo.png"}, body["user"])
	require.Regexp(t, isoMillis, body["expires"])
	exp, err := time.Parse(time.RFC3339, body["expires"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(30*24*time.Hour), exp, time.Minute)
	c, ok := findCookie(res.Header, "next-auth.session-token")
	require.True(t, ok, "a token without auth_time (next-auth's encode) is re-issued at once, to carry it")
	require.NotEmpty(t, c.Value)
	require.EqualValues(t, 0, e.counts().Sessions, "no database row for jwt sessions")

	// A token made under another secret is garbage: {} and cleared.
	other, err := jwt.NewKey("another-secret-another-secret-another", "", jwt.V4)
	require.NoError(t, err)
	bad, err := other.Encode(map[string]any{"sub": "x"}, time.Hour, time.Now())
	require.NoError(t, err)
	res = e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+bad, nil)
	require.Equal(t, "{}", strings.TrimSpace(res.body))
	requireCleared(t, res.Header, "next-auth.session-token")

	// An expired token likewise.
	old := jwtCookie(t, map[string]any{"sub": "x"}, time.Now().Add(-31*24*time.Hour))
	res = e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+old, nil)
	require.Equal(t, "{}", strings.TrimSpace(res.body))
	requireCleared(t, res.Header, "next-auth.session-token")
}

// TestSessionJWTReissue: GET /session re-issues a JWT at most once per
// update_age (next-auth v4: on every call), and reports the expiry of the
// cookie the browser then holds.
func TestSessionJWTReissue(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	e := startEnv(t, envOpts{clock: clock, config: func(c *config.Config) {
		c.Session.Strategy = config.StrategyJWT
		c.Session.AbsoluteMaxAge = 0 // next-auth's unlimited rolling, so re-issuing moves the expiry
	}})
	start := clock.Now()
	tok := jwtCookie(t, map[string]any{"name": "Jo", "sub": "user-1", "auth_time": start.Unix()}, start)
	get := func() (time.Time, setCookie, bool) {
		t.Helper()
		res := e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok, nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		exp, err := time.Parse(time.RFC3339, res.json(t)["expires"].(string))
		require.NoError(t, err)
		c, ok := findCookie(res.Header, "next-auth.session-token")
		return exp, c, ok
	}

	clock.Add(time.Hour)
	exp, _, reissued := get()
	require.False(t, reissued, "within update_age: no Set-Cookie")
	require.True(t, start.Add(30*24*time.Hour).Equal(exp), "the token's own expiry: %v", exp)

	clock.Add(24 * time.Hour)
	exp, c, reissued := get()
	require.True(t, reissued, "update_age has passed: re-issued")
	require.True(t, clock.Now().Add(30*24*time.Hour).Equal(exp), "now+max_age: %v", exp)
	require.True(t, exp.Equal(c.Expires), "the cookie says what the body says")
}

func TestSessionJWTAuthJS(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) {
		c.Session.Strategy = config.StrategyJWT
		c.Cookies.Style = config.StyleAuthJS
	}})
	s, err := session.NewJWT([]string{testSecret}, jwt.V5, "authjs.session-token", cookies.Writer{}, session.Lifetime{MaxAge: time.Hour, Now: time.Now})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	require.NoError(t, s.Create(context.Background(), rec, httptest.NewRequest(http.MethodGet, "/", nil), session.User{}, map[string]any{"sub": "u", "email": "v5@example.com"}))
	c, ok := findCookie(rec.Header(), "authjs.session-token")
	require.True(t, ok)

	res := e.rawDo(http.MethodGet, "/session", "authjs.session-token="+c.Value, nil)
	require.Equal(t, "v5@example.com", res.json(t)["user"].(map[string]any)["email"])
	// A v4-style cookie name is not read under the authjs style.
	res = e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+c.Value, nil)
	require.Equal(t, "{}", strings.TrimSpace(res.body))
}
