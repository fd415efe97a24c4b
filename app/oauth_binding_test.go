package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
)

const csrfCookie = "next-auth.csrf-token"

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

// The check cookie carries its provider: "other"'s check cookie is refused
// at "idp"'s callback even with a state made for idp from that cookie's own
// attempt, and a code, verifier and nonce that belong together at the same
// IdP and client. Only the provider binding stands in the way; the control
// completes the same construction at the provider it was made for.
func TestOAuthCheckCookiesBoundToProvider(t *testing.T) {
	for _, tc := range []struct {
		at string
		ok bool
	}{{"idp", false}, {"other", true}} {
		t.Run("callback at "+tc.at, func(t *testing.T) {
			e := startOIDC(t, twoProviders, nil)
			s := steps{e, e.client}
			res := e.post(noRedirects(e.client), "/signin/other", url.Values{"csrfToken": {e.csrf(e.client)}, "callbackUrl": {"/home"}})
			require.Equal(t, http.StatusFound, res.StatusCode)
			otherAuth, err := url.Parse(res.location())
			require.NoError(t, err)
			cb := s.toCallback(otherAuth)
			require.Equal(t, "/api/auth/callback/other", cb.Path)

			var p checkPayload
			require.NoError(t, checkCodec(t, testSecret).Decode(checkCookie, s.check(), &p))
			require.Equal(t, "other", p.Provider)
			state := stateFor(e.csrfTokenOf(e.client), tc.at, p.Attempt)
			at := e.base + "/callback/" + tc.at + "?" + url.Values{"code": {cb.Query().Get("code")}, "state": {state}}.Encode()
			res = s.get(at)
			if tc.ok {
				require.Equal(t, e.origin+"/home", res.location())
				require.Equal(t, "other", e.onlyAccount().Provider)
				return
			}
			e.requireError(res, "OAuthCallback")
			requireNothingCreated(t, e)
		})
	}
}

// The check cookie lives 15 minutes (next-auth's check cookies' lifetime),
// judged by the app's clock.
func TestOAuthCheckCookiesExpire(t *testing.T) {
	const checkTTL = 15 * time.Minute
	for _, tc := range []struct {
		name  string
		after time.Duration
		ok    bool
	}{
		{"at expiry", checkTTL, true},
		{"one second after expiry", checkTTL + time.Second, false},
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
// cookie or trip to the IdP.
func TestOAuthSignInRequiresCSRF(t *testing.T) {
	// One instance, each case in fresh browsers: none may reach the IdP or
	// create anything, so the counts stay at zero for the next.
	shared, tap := startTapped(t, envOpts{})
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
			e := shared.in(t)
			c := noRedirects(e.browser())
			form := tc.form(e.csrf(c))
			if form == nil {
				form = url.Values{"csrfToken": {e.csrf(e.browser())}, "callbackUrl": {"/home"}}
			}
			res := e.post(c, "/signin/idp", form)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.base+"/signin?csrf=true", res.location())
			_, set := findCookie(res.Header, checkCookie)
			require.False(t, set, "%s set", checkCookie)
			_, inJar := e.jarCookie(c, checkCookie)
			require.False(t, inJar, "%s in the jar", checkCookie)
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
