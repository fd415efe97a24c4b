package app_test

// Every OAuth sign-in attempt is unique and one-time: its state hashes the
// CSRF token with a random attempt nonce kept in the check cookie, and every
// callback spends the attempt, whatever its outcome. The check cookie is
// also rebuilt here, independently of the app (HKDF-SHA256 keys per secret,
// gorilla/securecookie with JSON), so single properties of it can be varied.

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/random"
)

// checkCookie is the OAuth check cookie's name (http, next-auth style).
const checkCookie = "next-auth.oauth-check"

// base64URL43 is base64url of 32 bytes: a state, a verifier, a nonce.
var base64URL43 = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// checkPayload is what the check cookie holds.
type checkPayload struct {
	Attempt  string `json:"attempt"`
	Verifier string `json:"verifier,omitempty"`
	Nonce    string `json:"nonce,omitempty"`
	Provider string `json:"provider"`
	Created  int64  `json:"created"`
}

// checkCodec is the check cookie's codec for one secret.
func checkCodec(t testing.TB, secret string) *securecookie.SecureCookie {
	t.Helper()
	hashKey, err := hkdf.Key(sha256.New, []byte(secret), nil, "latchkey oauth-check cookie: HMAC-SHA256 key", 64)
	require.NoError(t, err)
	blockKey, err := hkdf.Key(sha256.New, []byte(secret), nil, "latchkey oauth-check cookie: AES-256 key", 32)
	require.NoError(t, err)
	return securecookie.New(hashKey, blockKey).MaxAge(900).SetSerializer(securecookie.JSONEncoder{})
}

// sealCheck makes a check cookie value under secret.
func sealCheck(t testing.TB, secret string, p checkPayload) string {
	t.Helper()
	v, err := checkCodec(t, secret).Encode(checkCookie, p)
	require.NoError(t, err)
	return v
}

// stateFor is the state of an attempt: base64url(sha256(csrfToken|provider|attempt)).
func stateFor(csrfToken, provider, attempt string) string {
	sum := sha256.Sum256([]byte(csrfToken + "|" + provider + "|" + attempt))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// setCheck puts a check cookie value into the browser, where the app keeps it.
func (s steps) setCheck(value string) {
	s.e.setJarCookieAt(s.c, checkCookie, cookies.Encode(value), s.e.path)
}

// check is the browser's check cookie value, decoded.
func (s steps) check() string {
	s.e.t.Helper()
	raw, ok := s.e.jarCookie(s.c, checkCookie)
	require.True(s.e.t, ok, "no %s cookie", checkCookie)
	v, err := url.PathUnescape(raw)
	require.NoError(s.e.t, err)
	return v
}

// now is the app's clock.
func (e *env) now() time.Time {
	if e.clock != nil {
		return e.clock.Now()
	}
	return time.Now()
}

// sealedAttempt starts a sign-in in the browser, then replaces its check
// cookie by p sealed under secret (empty fields get fresh values, Provider
// "idp"), and has the IdP approve an authorization request whose state,
// code_challenge and nonce fit p. It returns latchkey's callback URL, which
// succeeds exactly when latchkey accepts the sealed cookie, and p as sealed.
func (s steps) sealedAttempt(secret string, p checkPayload) (*url.URL, checkPayload) {
	s.e.t.Helper()
	authURL := s.toIdP()
	if p.Attempt == "" {
		p.Attempt = random.Base64URL(32)
	}
	if p.Verifier == "" {
		p.Verifier = random.Base64URL(32)
	}
	if p.Nonce == "" {
		p.Nonce = random.Base64URL(32)
	}
	if p.Provider == "" {
		p.Provider = "idp"
	}
	if p.Created == 0 {
		p.Created = s.e.now().Unix()
	}
	q := authURL.Query()
	q.Set("state", stateFor(s.e.csrfTokenOf(s.c), "idp", p.Attempt))
	q.Set("code_challenge", s256(p.Verifier))
	q.Set("nonce", p.Nonce)
	authURL.RawQuery = q.Encode()
	cb := s.toCallback(authURL)
	s.setCheck(sealCheck(s.e.t, secret, p))
	return cb, p
}

// savedCookies are the cookies a browser sends to a URL, by name.
func savedCookies(c *http.Client, u *url.URL) map[string]string {
	out := map[string]string{}
	for _, ck := range c.Jar.Cookies(u) {
		out[ck.Name] = ck.Value
	}
	return out
}

// restore puts saved cookies back into the browser, as they were.
func (s steps) restore(saved map[string]string) {
	for name, value := range saved {
		s.e.setJarCookieAt(s.c, name, value, "/")
		if name == checkCookie {
			s.e.setJarCookieAt(s.c, name, value, s.e.path)
		}
	}
}

// withState is cb with another state.
func withState(cb *url.URL, state string) *url.URL {
	u := *cb
	q := u.Query()
	q.Set("state", state)
	u.RawQuery = q.Encode()
	return &u
}

// requireCheckCleared asserts that a callback response expires the check
// cookie at the base path and issues a new CSRF cookie.
func requireCheckClearedAndCSRFRotated(t *testing.T, e *env, res resp, csrfBefore string) {
	t.Helper()
	ck, ok := findCookie(res.Header, checkCookie)
	require.True(t, ok, "the callback must clear %s; Set-Cookie: %q", checkCookie, res.Header.Values("Set-Cookie"))
	require.Equal(t, "", ck.Value)
	require.Less(t, ck.MaxAge, 0, "Max-Age=0: %s", ck.raw)
	require.Equal(t, e.path, ck.Path)
	csrf, ok := findCookie(res.Header, csrfCookie)
	require.True(t, ok, "the callback must issue a new CSRF cookie; Set-Cookie: %q", res.Header.Values("Set-Cookie"))
	require.NotEqual(t, csrfBefore, csrf.Value)
	require.Regexp(t, `^[0-9a-f]{64}%7C[0-9a-f]{64}$`, rawValue(csrf.raw))
}

// Replaying a completed callback with the same state and the same cookies
// fails, with a fresh code for the same authorization request (the IdP would
// refuse the used one anyway): after a successful callback (the request
// replayed whole, its cookies included) and after a failed one (in the same
// browser, whose check cookie the failure spent).
func TestOAuthStateIsOneTime(t *testing.T) {
	t.Run("after a successful callback, the whole request replayed", func(t *testing.T) {
		e := startOIDC(t, nil, nil)
		s := steps{e, e.client}
		authURL := s.toIdP()
		cb := s.toCallback(authURL)
		saved := savedCookies(s.c, cb)
		require.Equal(t, e.origin+"/home", s.get(cb.String()).location())
		require.EqualValues(t, 1, e.counts().Sessions)

		again := s.toCallback(authURL) // a new code for the same request: same state, challenge, nonce
		require.Equal(t, cb.Query().Get("state"), again.Query().Get("state"))
		s.restore(saved)
		e.requireError(s.get(again.String()), "OAuthCallback")
		require.EqualValues(t, 1, e.counts().Users)
		require.EqualValues(t, 1, e.counts().Sessions, "the replay started no session")
	})

	t.Run("after a failed callback, in the same browser", func(t *testing.T) {
		e := startOIDC(t, nil, nil)
		s := steps{e, e.client}
		authURL := s.toIdP()
		cb := s.toCallback(authURL)
		csrfBefore, _ := e.jarCookie(s.c, csrfCookie)
		bad := *cb
		q := bad.Query()
		q.Set("code", "never-issued")
		bad.RawQuery = q.Encode()
		failed := s.get(bad.String())
		e.requireError(failed, "OAuthCallback")

		again := s.toCallback(authURL)
		e.requireError(s.get(again.String()), "OAuthCallback")
		requireNothingCreated(t, e)
		requireCheckClearedAndCSRFRotated(t, e, failed, csrfBefore)
	})

	t.Run("two callbacks at once with the same cookies: one wins", func(t *testing.T) {
		e := startOIDC(t, nil, nil)
		s := steps{e, e.client}
		authURL := s.toIdP()
		cbs := []*url.URL{s.toCallback(authURL), s.toCallback(authURL)} // two codes, one attempt
		header := make([]string, 0)
		for name, value := range savedCookies(s.c, cbs[0]) {
			header = append(header, name+"="+value)
		}
		var wg sync.WaitGroup
		results := make([]resp, len(cbs))
		for i, cb := range cbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.rawDo(http.MethodGet, cb.String(), strings.Join(header, "; "), nil)
			}()
		}
		wg.Wait()
		wins := 0
		for _, r := range results {
			if r.location() == e.origin+"/home" {
				wins++
			} else {
				e.requireError(r, "OAuthCallback")
			}
		}
		require.Equal(t, 1, wins)
		require.EqualValues(t, 1, e.counts().Sessions)
	})
}

// The state of an attempt the user cancelled at the IdP (error=access_denied)
// is worthless afterwards: the failed callback clears the check cookie and
// rotates the CSRF token, and the next attempt's cookies do not accept it.
func TestOAuthCancelledAttemptStateIsDead(t *testing.T) {
	e := startOIDC(t, nil, nil)
	s := steps{e, e.client}
	cancelled := s.toIdP().Query().Get("state")
	csrfBefore, _ := e.jarCookie(s.c, csrfCookie)
	res := s.get(e.base + "/callback/idp?" + url.Values{"error": {"access_denied"}, "state": {cancelled}}.Encode())
	e.requireError(res, "Callback")

	// The next attempt, approved at the IdP; its callback carries the old state.
	cb := s.toCallback(s.toIdP())
	e.requireError(s.get(withState(cb, cancelled).String()), "OAuthCallback")
	requireNothingCreated(t, e)
	requireCheckClearedAndCSRFRotated(t, e, res, csrfBefore)
}

// Two sign-in attempts in one browser, with the same CSRF token, get
// different states.
func TestOAuthStatesDifferPerAttempt(t *testing.T) {
	e := startOIDC(t, nil, nil)
	s := steps{e, e.client}
	first := s.toIdP().Query().Get("state")
	csrf := e.csrfTokenOf(s.c)
	second := s.toIdP().Query().Get("state")
	require.Equal(t, csrf, e.csrfTokenOf(s.c), "same CSRF token for both attempts")
	require.NotEqual(t, first, second)
	require.Regexp(t, base64URL43, first)
	require.Regexp(t, base64URL43, second)
}

// The check cookie fails closed: altered, sealed under a secret the app does
// not have, expired by the app's clock, another provider's, or missing →
// OAuthCallback with nothing created. The control, sealed the same way under
// the app's secret, signs in: each case differs from it in one property.
func TestOAuthCheckCookieFailsClosed(t *testing.T) {
	const otherSecret = "another-secret-0123456789abcdef0123456789"
	cases := []struct {
		name    string
		secret  string
		payload checkPayload
		alter   func(s steps)
		ok      bool
	}{
		{name: "control: sealed under the app's secret", secret: testSecret, ok: true},
		{name: "sealed under another secret", secret: otherSecret},
		{name: "another provider's", secret: testSecret, payload: checkPayload{Provider: "other"}},
		{name: "created 15 minutes and 1 second ago", secret: testSecret,
			payload: checkPayload{Created: -(15*60 + 1)}},
		{name: "created 14 minutes ago", secret: testSecret, payload: checkPayload{Created: -14 * 60}, ok: true},
		{name: "one character changed", secret: testSecret, alter: func(s steps) {
			v := s.check()
			i := len(v) / 2
			c := byte('A')
			if v[i] == 'A' {
				c = 'B'
			}
			s.setCheck(v[:i] + string(c) + v[i+1:])
		}},
		{name: "cut short", secret: testSecret, alter: func(s steps) {
			v := s.check()
			s.setCheck(v[:len(v)-4])
		}},
		{name: "missing", secret: testSecret, alter: func(s steps) {
			s.e.setJarCookieAt(s.c, checkCookie, "", s.e.path)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &testClock{now: time.Now().UTC().Truncate(time.Second)}
			e := startEnv(t, envOpts{ownURL: true, idp: true, clock: clk})
			s := steps{e, e.client}
			p := tc.payload
			if p.Created < 0 {
				p.Created = clk.Now().Unix() + p.Created
			}
			cb, _ := s.sealedAttempt(tc.secret, p)
			if tc.alter != nil {
				tc.alter(s)
			}
			res := s.get(cb.String())
			if tc.ok {
				require.Equal(t, e.origin+"/home", res.location())
				require.EqualValues(t, 1, e.counts().Sessions)
				return
			}
			e.requireError(res, "OAuthCallback")
			requireNothingCreated(t, e)
		})
	}
}

// Secret rotation: the check cookie is sealed under the first of
// cfg.Secrets() and accepted under any of them, so a sign-in in flight
// survives a rotation; a secret no longer configured is refused.
func TestOAuthCheckCookieSecretRotation(t *testing.T) {
	const newSecret = "rotated-secret-0123456789abcdef0123456789"
	rotated := func(c *config.Config) {
		c.Secret = testSecret // the older one, still accepted
		c.RotationSecrets = []string{newSecret}
	}

	t.Run("the app seals under the first secret", func(t *testing.T) {
		e := startOIDC(t, rotated, nil)
		s := steps{e, e.client}
		s.toIdP()
		v := s.check()
		var p checkPayload
		require.NoError(t, checkCodec(t, newSecret).Decode(checkCookie, v, &p))
		require.Equal(t, "idp", p.Provider)
		require.Regexp(t, base64URL43, p.Attempt)
		require.Error(t, checkCodec(t, testSecret).Decode(checkCookie, v, &p), "not under the older secret")
	})

	for _, tc := range []struct {
		name, secret string
		ok           bool
	}{
		{"sealed under the older secret", testSecret, true},
		{"sealed under the current secret", newSecret, true},
		{"sealed under a secret no longer configured", "retired-secret-0123456789abcdef0123456789", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startOIDC(t, rotated, nil)
			s := steps{e, e.client}
			cb, _ := s.sealedAttempt(tc.secret, checkPayload{})
			res := s.get(cb.String())
			if tc.ok {
				require.Equal(t, e.origin+"/home", res.location())
				return
			}
			e.requireError(res, "OAuthCallback")
			requireNothingCreated(t, e)
		})
	}
}
