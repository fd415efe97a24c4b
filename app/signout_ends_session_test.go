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

			const name = "next-auth.session-token"
			tok, ok := e.jarCookie(kept, name)
			require.True(t, ok)
			copied := e.browser()
			e.setJarCookie(copied, name, tok)
			require.NotEmpty(t, e.session(copied))

			res := e.post(noRedirects(kept), "/signout", url.Values{"csrfToken": {e.csrf(kept)}, "callbackUrl": {e.origin + "/bye"}})
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Empty(t, e.session(kept))
			require.Empty(t, e.session(copied), "a copy of the signed-out cookie still signs in")
			require.Len(t, e.sessionsOf(other), 1, "the signed-out session is still listed")
			require.NotEmpty(t, e.session(other), "another sign-in of the user stays")
		})
	}
}
