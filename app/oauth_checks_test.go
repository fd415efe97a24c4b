package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/random"
)

// steps walks the flow one redirect at a time so a test can tamper between hops.
type steps struct {
	e *env
	c *http.Client
}

func (s steps) get(u string) resp {
	s.e.t.Helper()
	return s.e.get(noRedirects(s.c), u)
}

// toIdP posts the sign-in form and returns the authorization URL.
func (s steps) toIdP() *url.URL {
	s.e.t.Helper()
	res := s.e.signIn(noRedirects(s.c), "idp", "/home")
	require.Equal(s.e.t, http.StatusFound, res.StatusCode)
	u, err := url.Parse(res.Header.Get("Location"))
	require.NoError(s.e.t, err)
	return u
}

// toCallback lets the IdP approve and returns latchkey's callback URL.
func (s steps) toCallback(authURL *url.URL) *url.URL {
	s.e.t.Helper()
	res := s.get(authURL.String())
	require.Equal(s.e.t, http.StatusFound, res.StatusCode)
	u, err := url.Parse(res.Header.Get("Location"))
	require.NoError(s.e.t, err)
	require.True(s.e.t, strings.HasPrefix(u.String(), s.e.base+"/callback/"), u.String())
	return u
}

func (s steps) setCookie(name, value string) { s.e.setJarCookie(s.c, name, value) }

func requireNothingCreated(t *testing.T, e *env) {
	t.Helper()
	require.Zero(t, e.counts().Users)
	require.Zero(t, e.counts().Accounts)
	require.Zero(t, e.counts().Sessions)
}

func TestOAuthCallbackChecksFailClosed(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(s steps, cb *url.URL) *url.URL
		code   string
	}{
		{"tampered state", func(_ steps, cb *url.URL) *url.URL {
			q := cb.Query()
			q.Set("state", strings.Repeat("0", 64))
			cb.RawQuery = q.Encode()
			return cb
		}, "OAuthCallback"},
		{"missing state", func(_ steps, cb *url.URL) *url.URL {
			q := cb.Query()
			q.Del("state")
			cb.RawQuery = q.Encode()
			return cb
		}, "OAuthCallback"},
		{"CSRF cookie replaced", func(s steps, cb *url.URL) *url.URL {
			s.setCookie("next-auth.csrf-token", "")
			return cb
		}, "OAuthCallback"},
		{"missing check cookie", func(s steps, cb *url.URL) *url.URL {
			s.e.setJarCookieAt(s.c, checkCookie, "", s.e.path)
			return cb
		}, "OAuthCallback"},
		{"garbage check cookie", func(s steps, cb *url.URL) *url.URL {
			s.setCheck("MTcwMDAwMDAwMHxnYXJiYWdlfGdhcmJhZ2U=")
			return cb
		}, "OAuthCallback"},
		{"a later attempt replaced the check cookie", func(s steps, cb *url.URL) *url.URL {
			s.toIdP()
			return cb
		}, "OAuthCallback"},
		{"missing code", func(_ steps, cb *url.URL) *url.URL {
			q := cb.Query()
			q.Del("code")
			cb.RawQuery = q.Encode()
			return cb
		}, "OAuthCallback"},
	}
	// One instance, each case in a fresh browser: every case must create
	// nothing, so the database stays empty for the next.
	shared := startOIDC(t, nil, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := shared.in(t)
			e.client = e.following(e.browser())
			s := steps{e, e.client}
			cb := tc.tamper(s, s.toCallback(s.toIdP()))
			e.requireError(s.get(cb.String()), tc.code)
			requireNothingCreated(t, e)
			require.Equal(t, map[string]any{}, e.session(e.client))
		})
	}
}

// A verifier or nonce from another sign-in fails, each on its own check:
// the check cookie is sealed with the right attempt and provider but one
// stale value. The token endpoint shows which side refused: the IdP the
// verifier (no tokens issued), latchkey the nonce (tokens issued, then
// refused).
func TestOAuthWrongVerifierAndNonce(t *testing.T) {
	cases := []struct {
		name   string
		stale  func(p *checkPayload) // replaces one value by another sign-in's; nil: none
		issued int                   // token responses with tokens
		ok     bool
	}{
		{"stale verifier, fresh nonce", func(p *checkPayload) { p.Verifier = random.Base64URL(32) }, 0, false},
		{"fresh verifier, stale nonce", func(p *checkPayload) { p.Nonce = random.Base64URL(32) }, 1, false},
		{"control: both fresh", nil, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, tap := startTapped(t, envOpts{})
			s := steps{e, e.client}
			cb, p := s.sealedAttempt(testSecret, checkPayload{})
			if tc.stale != nil {
				tc.stale(&p)
				s.setCheck(sealCheck(t, testSecret, p))
			}
			res := s.get(cb.String())
			require.Equal(t, tc.issued, tap.issued())
			require.NotZero(t, tap.requests())
			if tc.ok {
				require.Equal(t, e.origin+"/home", res.location())
				return
			}
			e.requireError(res, "OAuthCallback")
			requireNothingCreated(t, e)
		})
	}
}

// A missing, unreadable or incomplete check cookie is refused by latchkey
// itself, before any token request: mockoidc would also refuse a code
// without its verifier, but latchkey must not depend on the IdP enforcing
// PKCE.
func TestOAuthMissingCheckCookieStopsBeforeIdP(t *testing.T) {
	// One instance, each case in a fresh browser (none creates anything).
	shared, tap := startTapped(t, envOpts{})
	for _, tc := range []struct {
		name  string
		alter func(s steps, p checkPayload)
	}{
		{"missing", func(s steps, _ checkPayload) { s.e.setJarCookieAt(s.c, checkCookie, "", s.e.path) }},
		{"garbage", func(s steps, _ checkPayload) { s.setCheck("eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..x.y.z") }},
		{"without a verifier", func(s steps, p checkPayload) {
			p.Verifier = ""
			s.setCheck(sealCheck(s.e.t, testSecret, p))
		}},
		{"without a nonce", func(s steps, p checkPayload) {
			p.Nonce = ""
			s.setCheck(sealCheck(s.e.t, testSecret, p))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := shared.in(t)
			e.client = e.following(e.browser())
			requests := tap.requests()
			s := steps{e, e.client}
			cb, p := s.sealedAttempt(testSecret, checkPayload{})
			tc.alter(s, p)
			e.requireError(s.get(cb.String()), "OAuthCallback")
			require.Equal(t, requests, tap.requests(), "no token request may reach the IdP")
			requireNothingCreated(t, e)
		})
	}
}

// Another provider's code, state and check cookies replayed at this
// provider's callback are refused. The provider-bound state already stops
// this; TestOAuthCheckCookiesBoundToProvider isolates the cookie binding.
func TestOAuthCookiesFromAnotherProvider(t *testing.T) {
	e := startOIDC(t, twoProviders, nil)
	s := steps{e, e.client}
	tok := e.csrf(e.client)
	res := e.post(noRedirects(e.client), "/signin/other", url.Values{"csrfToken": {tok}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	otherAuth, _ := url.Parse(res.Header.Get("Location"))
	cb := s.toCallback(otherAuth)
	// Replay "other"'s code and cookies against the "idp" callback.
	cb.Path = strings.Replace(cb.Path, "/callback/other", "/callback/idp", 1)
	e.requireError(s.get(cb.String()), "OAuthCallback")
	requireNothingCreated(t, e)
}

// Replaying the callback in the same browser, even with the check cookie
// put back, fails at latchkey before the IdP is asked: the attempt is spent
// and the CSRF token rotated. TestOAuthStateIsOneTime has the variants.
func TestOAuthReplayedCode(t *testing.T) {
	e, tap := startTapped(t, envOpts{})
	s := steps{e, e.client}
	cb := s.toCallback(s.toIdP())
	saved := s.check()
	res := s.get(cb.String())
	require.Equal(t, e.origin+"/home", res.Header.Get("Location"))
	_, cleared := e.jarCookie(s.c, checkCookie)
	require.False(t, cleared, "the callback clears the check cookie")
	requests := tap.requests()
	s.setCheck(saved)
	e.requireError(s.get(cb.String()), "OAuthCallback")
	require.Equal(t, requests, tap.requests(), "the replay never reaches the IdP")
	require.EqualValues(t, 1, e.counts().Users)
	require.EqualValues(t, 1, e.counts().Sessions)
}

func TestOAuthProviderError(t *testing.T) {
	e := startOIDC(t, nil, nil)
	s := steps{e, e.client}
	s.toIdP()
	res := s.get(e.base + "/callback/idp?error=access_denied&state=x")
	e.requireError(res, "Callback")
	requireNothingCreated(t, e)
}

func TestOAuthIdPDown(t *testing.T) {
	e := startOIDC(t, nil, nil)
	require.NoError(t, e.idp.Shutdown())
	tok := e.csrf(e.client)
	res := e.post(noRedirects(e.client), "/signin/idp", url.Values{"csrfToken": {tok}})
	e.requireError(res, "OAuthSignin")
}

func TestOAuthFormPostCallbackWithoutCookies(t *testing.T) {
	e := startOIDC(t, nil, nil)
	e.idp.QueueUser(&mockoidc.MockUser{Subject: "fp", Email: "fp@example.com"})
	s := steps{e, e.client}
	cb := s.toCallback(s.toIdP())
	// A cross-site form_post arrives without SameSite=Lax cookies.
	form := url.Values{"code": {cb.Query().Get("code")}, "state": {cb.Query().Get("state")}}
	res := e.rawDo(http.MethodPost, "/callback/idp", "", strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Empty(t, res.Header.Values("Set-Cookie"), "the bounce must not replace the user's cookies")
	// The browser follows the 303 as a top-level GET, with its cookies.
	res = s.get(res.Header.Get("Location"))
	require.Equal(t, e.origin+"/home", res.Header.Get("Location"))
	require.Equal(t, "fp@example.com", userEmail(e.session(e.client)))
}

// TestOAuthFormPostBounceBodyLimits: the form_post bounce reads the body
// itself (no cookies, so before the usual request setup) and answers as
// every POST route does: 413 over server.max_body_bytes, with or without
// a Content-Length, 400 for a body that is not a form, and no redirect.
func TestOAuthFormPostBounceBodyLimits(t *testing.T) {
	e := startOIDC(t, nil, nil)
	form := "application/x-www-form-urlencoded"
	huge := "code=x&state=y&pad=" + strings.Repeat("a", 5<<20)
	res := e.rawDo(http.MethodPost, "/callback/idp", "", strings.NewReader(huge), "Content-Type", form)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	require.Empty(t, res.location())
	res = e.rawDo(http.MethodPost, "/callback/idp", "", io.MultiReader(strings.NewReader(huge)), "Content-Type", form)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "chunked")
	res = e.rawDo(http.MethodPost, "/callback/idp", "", strings.NewReader("code=%zz"), "Content-Type", form)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Empty(t, res.location())
}

func TestOAuthJSONModeAndAuthorizationParams(t *testing.T) {
	e := startOIDC(t, nil, nil)
	tok := e.csrf(e.client)
	res := e.post(noRedirects(e.client), "/signin/idp?prompt=login&login_hint=bob&state=evil",
		url.Values{"csrfToken": {tok}, "json": {"true"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	var body struct{ URL string }
	require.NoError(t, json.Unmarshal([]byte(res.body), &body))
	u, err := url.Parse(body.URL)
	require.NoError(t, err)
	q := u.Query()
	require.Equal(t, "login", q.Get("prompt"))
	require.Equal(t, "bob", q.Get("login_hint"))
	require.NotEqual(t, "evil", q.Get("state"), "the state cannot be overridden")
	require.Regexp(t, base64URL43, q.Get("state"))
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.NotEmpty(t, q.Get("nonce"))
	require.Equal(t, e.base+"/callback/idp", q.Get("redirect_uri"))
}

// Each successful sign-in rotates the CSRF token, so the states a finished
// flow's browser could still derive (forms, other tabs) no longer match.
func TestSignInRotatesCSRFAndState(t *testing.T) {
	e := startOIDC(t, nil, nil)
	s := steps{e, e.client}
	before := s.toIdP().Query().Get("state")
	csrfBefore := e.csrfTokenOf(s.c)
	cb := s.toCallback(s.toIdP())
	require.Equal(t, e.origin+"/home", s.get(cb.String()).location())
	require.NotEqual(t, csrfBefore, e.csrfTokenOf(s.c))
	after := s.toIdP().Query().Get("state")
	require.NotEqual(t, before, after)
	require.Regexp(t, base64URL43, after)
}
