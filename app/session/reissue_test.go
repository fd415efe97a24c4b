package session_test

// When the jwt strategy re-issues its token (see JWT.plan): at most once per
// update_age, when that moves the expiry; at once for a rotated secret, a
// token without auth_time or with a longer life than configured; and, with
// the expiry kept, when the hooks changed the claims.

import (
	"maps"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/session"
)

// tokenClaims decodes the browser's session token with the harness secret.
func tokenClaims(t *testing.T, format jwt.Format, b browser, now time.Time) map[string]any {
	t.Helper()
	salt := ""
	if format == jwt.V5 {
		salt = cookieName
	}
	k, err := jwt.NewKey(secret, salt, format)
	require.NoError(t, err)
	c, err := k.Decode(b[cookieName], now)
	require.NoError(t, err)
	return c
}

func setCookies(rec *httptest.ResponseRecorder) []string {
	return rec.Header().Values("Set-Cookie")
}

func TestJWTReissuedOncePerUpdateAge(t *testing.T) {
	for _, format := range []jwt.Format{jwt.V4, jwt.V5} {
		t.Run(format.String(), func(t *testing.T) {
			h := newJWTHarness(format)(t, 0)
			b := browser{}
			start := h.clock.Now()
			create(t, h, b, h.newUser(t), nil)
			issued := b[cookieName]

			for _, after := range []time.Duration{time.Second, time.Hour, updateAge - time.Second} {
				h.clock.t = start.Add(after)
				s, _ := read(t, h, b)
				require.NotNil(t, s)
				require.True(t, start.Add(maxAge).Equal(s.Expires), "reports the token's exp: %v", s.Expires)
				require.Empty(t, setCookies(refresh(t, h, b, s)), "not re-issued %v after issue", after)
				require.Equal(t, issued, b[cookieName])
			}

			h.clock.t = start.Add(updateAge)
			s, _ := read(t, h, b)
			require.NotNil(t, s)
			now := h.clock.Now()
			require.True(t, now.Add(maxAge).Equal(s.Expires), "reports the re-issued expiry: %v", s.Expires)
			rec := refresh(t, h, b, s)
			c, ok := findCookie(rec.Header(), cookieName)
			require.True(t, ok, "re-issued once update_age has passed")
			require.True(t, s.Expires.Equal(c.Expires), "the cookie says what GET /session reports")
			claims := tokenClaims(t, format, b, now)
			require.EqualValues(t, now.Unix(), claims["iat"])
			require.EqualValues(t, now.Add(maxAge).Unix(), claims["exp"])
			require.EqualValues(t, start.Unix(), claims["auth_time"], "the sign-in time stays")

			h.clock.Add(time.Hour)
			s, _ = read(t, h, b)
			require.True(t, now.Add(maxAge).Equal(s.Expires))
			require.Empty(t, setCookies(refresh(t, h, b, s)), "and not again within update_age")
		})
	}
}

// With absolute_max_age = max_age (the default) every expiry is the
// sign-in's end: re-issuing would move nothing, so nothing is re-issued.
func TestJWTNotReissuedWhenNothingMoves(t *testing.T) {
	h := newJWTHarness(jwt.V4)(t, maxAge)
	b := browser{}
	start := h.clock.Now()
	create(t, h, b, h.newUser(t), nil)
	for range 3 {
		h.clock.Add(2 * updateAge)
		s, _ := read(t, h, b)
		require.NotNil(t, s)
		require.True(t, start.Add(maxAge).Equal(s.Expires))
		require.Empty(t, setCookies(refresh(t, h, b, s)))
	}
}

// A hook that changes the claims (in place or with a new map) gets them
// into the cookie at once; the expiry stays, as a change is no extension.
// Equal claims in another map are no change.
func TestJWTReissuedWhenClaimsChange(t *testing.T) {
	for _, format := range []jwt.Format{jwt.V4, jwt.V5} {
		t.Run(format.String(), func(t *testing.T) {
			h := newJWTHarness(format)(t, 0)
			b := browser{}
			start := h.clock.Now()
			create(t, h, b, h.newUser(t), nil)
			h.clock.Add(time.Hour)

			s, _ := read(t, h, b)
			s.Claims = maps.Clone(s.Claims)
			require.Empty(t, setCookies(refresh(t, h, b, s)), "equal claims: not re-issued")

			s, _ = read(t, h, b)
			s.Claims["name"] = "Renamed" // edited in place, as hooks often do
			rec := refresh(t, h, b, s)
			c, ok := findCookie(rec.Header(), cookieName)
			require.True(t, ok, "changed claims: re-issued")
			require.True(t, start.Add(maxAge).Equal(c.Expires), "expiry kept: %v", c.Expires)
			claims := tokenClaims(t, format, b, h.clock.Now())
			require.Equal(t, "Renamed", claims["name"])
			require.EqualValues(t, start.Add(maxAge).Unix(), claims["exp"])
			require.EqualValues(t, start.Unix(), claims["auth_time"])

			s, _ = read(t, h, b)
			require.Equal(t, "Renamed", *s.User.Name)
			require.True(t, start.Add(maxAge).Equal(s.Expires))
			require.Empty(t, setCookies(refresh(t, h, b, s)), "and then stable")
		})
	}
}

// A token that lives longer than latchkey would let it (here minted by
// next-auth's encode with a one-year maxAge, or before max_age was
// shortened) is re-issued under the configured lifetime at once.
func TestJWTReissuedWhenLifeTooLong(t *testing.T) {
	h := newJWTHarness(jwt.V4)(t, 0)
	k, err := jwt.NewKey(secret, "", jwt.V4)
	require.NoError(t, err)
	now := h.clock.Now()
	tok, err := k.Encode(map[string]any{"sub": "u1", "auth_time": now.Unix()}, 365*24*time.Hour, now)
	require.NoError(t, err)
	b := browser{cookieName: tok}
	h.clock.Add(time.Minute)
	s, _ := read(t, h, b)
	require.NotNil(t, s)
	require.True(t, h.clock.Now().Add(maxAge).Equal(s.Expires))
	c, ok := findCookie(refresh(t, h, b, s).Header(), cookieName)
	require.True(t, ok)
	require.True(t, s.Expires.Equal(c.Expires))
}

// Rotation re-issues in the same response even right after issue, when
// update_age would not.
func TestJWTRotationReissuesAtOnce(t *testing.T) {
	clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
	life := session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, Now: clk.Now}
	old, err := session.NewJWT([]string{"old-secret-0123456789abcdef0123"}, jwt.V4, cookieName, cookies.Writer{}, life)
	require.NoError(t, err)
	rotated, err := session.NewJWT([]string{secret, "old-secret-0123456789abcdef0123"}, jwt.V4, cookieName, cookies.Writer{}, life)
	require.NoError(t, err)
	b := browser{}
	create(t, harness{strategy: old, clock: clk}, b, session.User{ID: "u1"}, nil)
	h := harness{strategy: rotated, clock: clk}
	s, _ := read(t, h, b)
	require.NotNil(t, s)
	require.NotEmpty(t, setCookies(refresh(t, h, b, s)))
	tokenClaims(t, jwt.V4, b, clk.Now()) // now under the first secret
}

// A Session that Read did not produce has nothing to compare with: Refresh
// writes it as a fresh token.
func TestJWTRefreshUnreadSession(t *testing.T) {
	h := newJWTHarness(jwt.V4)(t, 0)
	b := browser{}
	now := h.clock.Now()
	c, ok := findCookie(refresh(t, h, b, &session.Session{Claims: map[string]any{"sub": "u1"}, SignedIn: now}).Header(), cookieName)
	require.True(t, ok)
	require.True(t, now.Add(maxAge).Equal(c.Expires))
	require.EqualValues(t, now.Unix(), tokenClaims(t, jwt.V4, b, now)["auth_time"])
}
