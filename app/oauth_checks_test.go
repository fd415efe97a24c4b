package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// steps walks the flow one redirect at a time so a test can tamper between hops.
type steps struct {
	e *oauthEnv
	c *http.Client
}

func (s steps) get(u string) *http.Response {
	s.e.t.Helper()
	res, err := noRedirects(s.c).Get(u)
	require.NoError(s.e.t, err)
	res.Body.Close()
	return res
}

// toIdP posts the sign-in form and returns the authorization URL.
func (s steps) toIdP() *url.URL {
	s.e.t.Helper()
	tok := s.e.csrf(s.c)
	res := s.e.post(noRedirects(s.c), "/signin/idp", url.Values{"csrfToken": {tok}, "callbackUrl": {"/home"}})
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

func (s steps) setCookie(name, value string) {
	u, _ := url.Parse(s.e.base)
	c := &http.Cookie{Name: name, Value: value, Path: "/"}
	if value == "" {
		c.MaxAge = -1
	}
	s.c.Jar.SetCookies(u, []*http.Cookie{c})
}

func (s steps) cookie(name string) string {
	u, _ := url.Parse(s.e.base)
	for _, c := range s.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

func requireError(t *testing.T, e *oauthEnv, res *http.Response, code string) {
	t.Helper()
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, e.base+"/error?error="+code, res.Header.Get("Location"))
}

func countRows(t *testing.T, e *oauthEnv, model any) int64 {
	var n int64
	require.NoError(t, e.app.Store().DB().Model(model).Count(&n).Error)
	return n
}

func requireNothingCreated(t *testing.T, e *oauthEnv) {
	t.Helper()
	require.Zero(t, countRows(t, e, &models.User{}))
	require.Zero(t, countRows(t, e, &models.Account{}))
	require.Zero(t, countRows(t, e, &models.Session{}))
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
		{"missing PKCE verifier", func(s steps, cb *url.URL) *url.URL {
			s.setCookie("next-auth.pkce.code_verifier", "")
			return cb
		}, "OAuthCallback"},
		{"garbage PKCE verifier", func(s steps, cb *url.URL) *url.URL {
			s.setCookie("next-auth.pkce.code_verifier", "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..x.y.z")
			return cb
		}, "OAuthCallback"},
		{"missing nonce", func(s steps, cb *url.URL) *url.URL {
			s.setCookie("next-auth.nonce", "")
			return cb
		}, "OAuthCallback"},
		{"missing code", func(_ steps, cb *url.URL) *url.URL {
			q := cb.Query()
			q.Del("code")
			cb.RawQuery = q.Encode()
			return cb
		}, "OAuthCallback"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newOAuthEnv(t, nil)
			s := steps{e, e.client}
			cb := tc.tamper(s, s.toCallback(s.toIdP()))
			requireError(t, e, s.get(cb.String()), tc.code)
			requireNothingCreated(t, e)
			require.Equal(t, map[string]any{}, e.session(e.client))
		})
	}
}

// A verifier and nonce from another sign-in (valid cookies, wrong values)
// must fail: the IdP rejects the verifier, go-oidc/latchkey the nonce.
func TestOAuthWrongVerifierAndNonce(t *testing.T) {
	for _, name := range []string{"next-auth.pkce.code_verifier", "next-auth.nonce"} {
		t.Run(name, func(t *testing.T) {
			e := newOAuthEnv(t, nil)
			s := steps{e, e.client}
			cb := s.toCallback(s.toIdP())
			stale := s.cookie(name)
			s.toIdP() // a second attempt rotates the check cookies
			s.setCookie(name, stale)
			requireError(t, e, s.get(cb.String()), "OAuthCallback")
			requireNothingCreated(t, e)
		})
	}
}

// Check cookies minted for another provider are refused even when the
// state matches.
func TestOAuthCookiesFromAnotherProvider(t *testing.T) {
	e := newOAuthEnv(t, func(c *config.Config) {
		second := c.Providers[0]
		second.ID, second.Name = "other", "Other"
		c.Providers = append(c.Providers, second)
	})
	s := steps{e, e.client}
	tok := e.csrf(e.client)
	res := e.post(noRedirects(e.client), "/signin/other", url.Values{"csrfToken": {tok}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	otherAuth, _ := url.Parse(res.Header.Get("Location"))
	cb := s.toCallback(otherAuth)
	// Replay "other"'s code and cookies against the "idp" callback.
	cb.Path = strings.Replace(cb.Path, "/callback/other", "/callback/idp", 1)
	requireError(t, e, s.get(cb.String()), "OAuthCallback")
	requireNothingCreated(t, e)
}

func TestOAuthReplayedCode(t *testing.T) {
	e := newOAuthEnv(t, nil)
	s := steps{e, e.client}
	pkce, nonce := "next-auth.pkce.code_verifier", "next-auth.nonce"
	cb := s.toCallback(s.toIdP())
	savedPKCE, savedNonce := s.cookie(pkce), s.cookie(nonce)
	res := s.get(cb.String())
	require.Equal(t, e.origin+"/home", res.Header.Get("Location"))
	// The attacker (or a double submit) replays the same callback with the
	// same check cookies: the IdP refuses the used code.
	s.setCookie(pkce, savedPKCE)
	s.setCookie(nonce, savedNonce)
	requireError(t, e, s.get(cb.String()), "OAuthCallback")
	require.EqualValues(t, 1, countRows(t, e, &models.User{}))
	require.EqualValues(t, 1, countRows(t, e, &models.Session{}))
}

func TestOAuthProviderError(t *testing.T) {
	e := newOAuthEnv(t, nil)
	s := steps{e, e.client}
	s.toIdP()
	res := s.get(e.base + "/callback/idp?error=access_denied&state=x")
	requireError(t, e, res, "Callback")
	requireNothingCreated(t, e)
}

func TestOAuthIdPDown(t *testing.T) {
	e := newOAuthEnv(t, nil)
	require.NoError(t, e.idp.Shutdown())
	tok := e.csrf(e.client)
	res := e.post(noRedirects(e.client), "/signin/idp", url.Values{"csrfToken": {tok}})
	requireError(t, e, res, "OAuthSignin")
}

func TestOAuthFormPostCallbackWithoutCookies(t *testing.T) {
	e := newOAuthEnv(t, nil)
	e.idp.QueueUser(&mockoidc.MockUser{Subject: "fp", Email: "fp@example.com"})
	s := steps{e, e.client}
	cb := s.toCallback(s.toIdP())
	// A cross-site form_post arrives without SameSite=Lax cookies.
	bare := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"code": {cb.Query().Get("code")}, "state": {cb.Query().Get("state")}}
	res, err := bare.PostForm(e.base+"/callback/idp", form)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Empty(t, res.Header.Values("Set-Cookie"), "the bounce must not replace the user's cookies")
	// The browser follows the 303 as a top-level GET, with its cookies.
	res = s.get(res.Header.Get("Location"))
	require.Equal(t, e.origin+"/home", res.Header.Get("Location"))
	require.Equal(t, "fp@example.com", userEmail(e.session(e.client)))
}

func TestOAuthJSONModeAndAuthorizationParams(t *testing.T) {
	e := newOAuthEnv(t, nil)
	tok := e.csrf(e.client)
	res, err := noRedirects(e.client).PostForm(e.base+"/signin/idp?prompt=login&login_hint=bob&state=evil",
		url.Values{"csrfToken": {tok}, "json": {"true"}})
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var body struct{ URL string }
	require.NoError(t, jsonDecode(res, &body))
	u, err := url.Parse(body.URL)
	require.NoError(t, err)
	q := u.Query()
	require.Equal(t, "login", q.Get("prompt"))
	require.Equal(t, "bob", q.Get("login_hint"))
	require.NotEqual(t, "evil", q.Get("state"), "the state cannot be overridden")
	require.Len(t, q.Get("state"), 64)
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.NotEmpty(t, q.Get("nonce"))
	require.Equal(t, e.base+"/callback/idp", q.Get("redirect_uri"))
}
