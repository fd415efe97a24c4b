package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/oauth"
)

const (
	pkceCookie  = "next-auth.pkce.code_verifier"
	nonceCookie = "next-auth.nonce"
	csrfCookie  = "next-auth.csrf-token"
)

// csrfTokenOf is the token half of c's CSRF cookie ("token%7Chash").
func (e *env) csrfTokenOf(c *http.Client) string {
	e.t.Helper()
	raw, ok := e.jarCookie(c, csrfCookie)
	require.True(e.t, ok, "no CSRF cookie")
	tok, _, found := strings.Cut(raw, "%7C")
	require.True(e.t, found, "CSRF cookie %q", raw)
	require.Len(e.t, tok, 64)
	return tok
}

// Check cookies carry their provider: "other"'s PKCE and nonce cookies are
// refused at "idp"'s callback even though the state there is valid for idp
// and the code, verifier and nonce all belong together at the same IdP and
// client. Only the provider binding stands in the way.
func TestOAuthCheckCookiesBoundToProvider(t *testing.T) {
	e := startOIDC(t, twoProviders, nil)
	s := steps{e, e.client}
	res := e.post(noRedirects(e.client), "/signin/other", url.Values{"csrfToken": {e.csrf(e.client)}, "callbackUrl": {"/home"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	otherAuth, err := url.Parse(res.location())
	require.NoError(t, err)
	cb := s.toCallback(otherAuth)
	require.Equal(t, "/api/auth/callback/other", cb.Path)
	code := cb.Query().Get("code")

	idpState := oauth.State(e.csrfTokenOf(e.client), "idp")
	require.NotEqual(t, cb.Query().Get("state"), idpState)
	forged := e.base + "/callback/idp?" + url.Values{"code": {code}, "state": {idpState}}.Encode()
	e.requireError(s.get(forged), "OAuthCallback")
	requireNothingCreated(t, e)

	// Control: the same code and cookies complete the flow they were made for.
	require.Equal(t, e.origin+"/home", s.get(cb.String()).location())
	require.EqualValues(t, 1, e.counts().Accounts)
	acc := e.onlyAccount()
	require.Equal(t, "other", acc.Provider)
}

// The check cookies live 15 minutes (next-auth), judged by the app's clock
// with the JWT decoder's 15-second clock tolerance.
func TestOAuthCheckCookiesExpire(t *testing.T) {
	const checkTTL, tolerance = 15 * time.Minute, 15 * time.Second
	for _, tc := range []struct {
		name  string
		after time.Duration
		ok    bool
	}{
		{"one second before expiry", checkTTL - time.Second, true},
		{"expired", checkTTL + tolerance + time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &testClock{now: time.Now().UTC().Truncate(time.Second)}
			e := startEnv(t, envOpts{ownURL: true, idp: true, clock: clk})
			s := steps{e, e.client}
			cb := s.toCallback(s.toIdP())
			clk.Add(tc.after)
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

// POST /signin/idp needs the CSRF token like every sign-in: without it, or
// with a wrong one, next-auth's redirect to the sign-in page and no check
// cookies or trip to the IdP.
func TestOAuthSignInRequiresCSRF(t *testing.T) {
	for _, tc := range []struct {
		name string
		form func(tok string) url.Values
	}{
		{"no csrfToken", func(string) url.Values { return url.Values{"callbackUrl": {"/home"}} }},
		{"wrong csrfToken", func(string) url.Values {
			return url.Values{"csrfToken": {strings.Repeat("a", 64)}, "callbackUrl": {"/home"}}
		}},
		{"another browser's csrfToken", func(string) url.Values { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, tap := startTapped(t, envOpts{})
			c := noRedirects(e.browser())
			form := tc.form(e.csrf(c))
			if form == nil {
				form = url.Values{"csrfToken": {e.csrf(e.browser())}, "callbackUrl": {"/home"}}
			}
			res := e.post(c, "/signin/idp", form)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.base+"/signin?csrf=true", res.location())
			for _, name := range []string{pkceCookie, nonceCookie} {
				_, set := findCookie(res.Header, name)
				require.False(t, set, "%s set", name)
				_, inJar := e.jarCookie(c, name)
				require.False(t, inJar, "%s in the jar", name)
			}
			require.Zero(t, tap.requests())
			requireNothingCreated(t, e)
		})
	}
}

// A user who signed in through the IdP and later uses an e-mail link for
// the same address (any case) is the same user, now with emailVerified.
func TestEmailAfterRealOIDCSignIn(t *testing.T) {
	e := startMail(t, envOpts{idp: true})
	e.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-alice", Email: "alice@example.com", PreferredUsername: "alice", EmailVerified: true})
	oidcBrowser := e.following(e.browser())
	require.Equal(t, e.origin+"/home", e.signIn(oidcBrowser, "idp", "/home").location())
	addr, id := e.sessionUser(oidcBrowser)
	require.Equal(t, "alice@example.com", addr)
	require.NotEmpty(t, id)
	require.EqualValues(t, 1, e.counts().Users)
	require.EqualValues(t, 1, e.counts().Accounts)

	c := e.browser()
	require.Equal(t, http.StatusFound, e.get(c, e.emailLink(c, "Alice@Example.com", e.origin+"/")).StatusCode)
	gotAddr, gotID := e.sessionUser(c)
	require.Equal(t, "alice@example.com", gotAddr)
	require.Equal(t, id, gotID, "the e-mail sign-in is the OIDC user")
	require.EqualValues(t, 1, e.counts().Users)
	require.EqualValues(t, 1, e.counts().Accounts, "e-mail sign-in adds no account row")
	u, err := e.app.Store().UserByID(t.Context(), id)
	require.NoError(t, err)
	require.NotNil(t, u.EmailVerified)
}
