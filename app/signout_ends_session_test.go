package app_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignOutEndsTheSession: POST /signout ends the session, not only the
// browser's cookie, in both strategies. A copy of the cookie taken before
// (a shared computer's browser that never saw the answer, a cookie lifted
// from it) signs nobody in afterwards, and the account page no longer
// lists the session.
func TestSignOutEndsTheSession(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startMail(t, b.opts(envOpts{}))
			kept := e.signInByEmail("ann@example.com")
			other := e.signInByEmail("ann@example.com")
			require.Len(t, e.sessionsOf(other), 2)

			copied := e.copySession(kept)

			res := e.post(noRedirects(kept), "/signout", url.Values{"csrfToken": {e.csrf(kept)}, "callbackUrl": {e.origin + "/bye"}})
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Empty(t, e.session(kept))
			require.Empty(t, e.session(copied), "a copy of the signed-out cookie still signs in")
			require.Len(t, e.sessionsOf(other), 1, "the signed-out session is still listed")
			require.NotEmpty(t, e.session(other), "another sign-in of the user stays")
		})
	}
}

// TestSignInEndsTheBrowsersSession: a sign-in in a browser that holds a
// session replaces it, in both strategies: the replaced session ends (its
// owner's account page no longer lists it, and a copy of its cookie signs
// nobody in), whoever signs in now.
func TestSignInEndsTheBrowsersSession(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startMail(t, b.opts(envOpts{}))
			shared := e.signInByEmail("ann@example.com")
			ann := e.signInByEmail("ann@example.com")
			require.Len(t, e.sessionsOf(ann), 2)

			copied := e.copySession(shared)

			res := e.get(shared, e.emailLink(shared, "bob@example.com", e.origin+"/"))
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			got, _ := e.sessionUser(shared)
			require.Equal(t, "bob@example.com", got)
			require.Empty(t, e.session(copied), "a copy of the replaced cookie still signs in")
			require.Len(t, e.sessionsOf(ann), 1, "the replaced session is still listed")
		})
	}
}

// copySession is a new browser holding a copy of c's session cookie, which
// signs it in.
func (e *env) copySession(c *http.Client) *http.Client {
	e.t.Helper()
	const name = "next-auth.session-token"
	tok, ok := e.jarCookie(c, name)
	require.True(e.t, ok)
	copied := e.browser()
	e.setJarCookie(copied, name, tok)
	require.NotEmpty(e.t, e.session(copied))
	return copied
}
