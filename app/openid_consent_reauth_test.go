package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// TestOpenIDConsentPostNeedsTheSignInTheRequestAsked: a request that sent
// the browser to sign in again (prompt=login, a max_age the session is
// older than, an id_token_hint naming another user) is not completed by
// posting its consent form straight away, by a browser that skipped the
// sign-in: the post goes to the sign-in page like the request did, and no
// code is issued. Posting it answered the client with a code for the old
// sign-in, so a stolen session cookie passed a relying party's
// re-authentication (OpenID Connect Core §3.1.2.3 says the OP MUST
// re-authenticate). The request still completes after the sign-in.
func TestOpenIDConsentPostNeedsTheSignInTheRequestAsked(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("app", rpSecret)
		ada := e.signedIn(ada)
		adaTok, _ := r.signInFlow(ada) // consents once
		bob := e.signedIn("bob@example.com")
		e.clock.Add(2 * time.Minute)
		for _, tc := range []struct {
			name    string
			browser *http.Client
			extra   []string
		}{
			{"prompt=login", ada, []string{"prompt", "login"}},
			{"max_age", ada, []string{"max_age", "60"}},
			{"id_token_hint", bob, []string{"id_token_hint", rawIDToken(t, adaTok)}},
		} {
			page, _ := r.authorize(tc.browser, tc.extra...)
			require.Equal(t, e.path+"/signin", page.Request.URL.Path, tc.name)
			back, err := url.Parse(page.Request.URL.Query().Get("callbackUrl"))
			require.NoError(t, err, tc.name)
			id := back.Query().Get("id")
			require.NotEmpty(t, id, tc.name)
			before, _ := e.oidcTokens()
			res := e.post(tc.browser, "/oidc/consent", url.Values{"csrfToken": {e.csrf(tc.browser)}, "id": {id}, "decision": {"allow"}})
			require.Equal(t, http.StatusFound, res.StatusCode, "%s: %s", tc.name, res.body)
			require.True(t, strings.HasPrefix(res.location(), e.base+"/signin?"), "%s: went to %s", tc.name, res.location())
			res = e.follow(tc.browser, res.location())
			require.Equal(t, e.path+"/signin", res.Request.URL.Path, tc.name)
			require.False(t, e.authRequestDone(id), "%s: the request was completed", tc.name)
			after, _ := e.oidcTokens()
			require.Equal(t, before, after, tc.name)
		}
		// The sign-in the request asked for completes it.
		page, a := r.authorize(ada, "prompt", "login")
		res := e.signInFrom(ada, page, "ada@example.com")
		_, id, err := r.exchange(r.codeFrom(res, a), a)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Unix(), authTime(t, id))
	})
}

// authRequestDone reports whether the authorization request id was completed.
func (e *env) authRequestDone(id string) bool {
	e.t.Helper()
	var ar openidstore.AuthRequest
	require.NoError(e.t, e.app.Store().DB().WithContext(context.Background()).Where("id = ?", id).Take(&ar).Error)
	return ar.DoneAt != nil
}

// TestOpenIDConsentIsForTheUserItWasShownTo: on a shared browser, a
// consent page shown to one user and posted after another signed in (in
// another tab) does not answer for the new user, whom the page never
// named: the request shows its consent page again, for the browser's
// user now, and nothing is granted or ended. The post completed the
// request for the other user, with a page naming the first.
func TestOpenIDConsentIsForTheUserItWasShownTo(t *testing.T) {
	e := startOP(t, backends()[0], nil)
	r := e.relyingParty("app", rpSecret)
	const bob = "bob@example.com"
	c := e.signedIn(ada)
	adaPage, a := r.authorize(c)
	require.Contains(t, adaPage.body, ada)
	id := regexpFind(t, adaPage.body, `name="id" value="([0-9a-f]+)"`)
	e.signInByLink(c, bob) // another tab
	var page resp
	for _, decision := range []string{"deny", "allow"} {
		page = e.consent(c, adaPage, decision)
		require.Equal(t, http.StatusOK, page.StatusCode, "%s: went to %s", decision, page.location())
		require.Contains(t, page.body, bob, decision)
		require.NotContains(t, page.body, ada, decision)
		require.False(t, e.authRequestDone(id), decision)
	}
	all, _ := e.oidcTokens()
	require.Zero(t, all)
	require.Equal(t, 2, strings.Count(e.logs.String(), "consent page shown to another user"))
	// The page shown to bob answers for bob.
	_, idTok, err := r.exchange(r.codeFrom(e.consent(c, page, "allow"), a), a)
	require.NoError(t, err)
	require.Equal(t, e.userID(bob), idTok.Subject)
}
