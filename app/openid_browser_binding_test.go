package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDCodeGoesOnlyToTheBrowserThatSignedIn: an attacker who starts an
// authorization request (their own PKCE verifier, so PKCE does not help)
// and gets a signed-in victim to open its continue link — silently for a
// first-party client, with one "Allow" for another — cannot fetch the code
// at the library's callback before the victim's browser does: the
// callback answers the gone page to any browser whose session is not the
// user who completed the request (none, or another user's), and nothing
// is used up, so the victim's own browser still gets its code. Without
// the check the attacker's fetch got the code and exchanged it for the
// victim's tokens (dex's CVE-2022-39222 is the same flaw).
func TestOpenIDCodeGoesOnlyToTheBrowserThatSignedIn(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		for _, client := range []struct {
			id, secret string
			consent    bool
		}{{"tool", rpSecret, false}, {"spa", "", true}} {
			r := e.relyingParty(client.id, client.secret)
			attacker := e.browser()
			target, a := r.authorizeURL()
			res := e.get(attacker, target)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			continueURL := res.location()
			require.True(t, strings.HasPrefix(continueURL, e.base+"/oidc/continue?"), continueURL)

			victim := e.signedIn(ada)
			res = e.get(victim, continueURL)
			if client.consent {
				res = e.consent(victim, res, "allow") // ends at the client: follow stops there
				require.Equal(t, http.StatusFound, res.StatusCode, res.body)
				require.True(t, strings.HasPrefix(res.location(), rpRedirect), res.location())
				// The victim's browser already has its code; the
				// attacker's fetch below comes too late as well as from
				// the wrong browser. Start over to race it properly.
				target, a = r.authorizeURL()
				continueURL = e.get(attacker, target).location()
				res = e.get(victim, continueURL) // consented before: no page now
			}
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			callback := res.location()
			require.True(t, strings.HasPrefix(callback, e.base+"/oidc/authorize/callback?"), callback)

			mallory := e.signedIn("mallory@example.com")
			for name, c := range map[string]*http.Client{"no session": attacker, "another user": mallory} {
				got := e.get(c, callback)
				require.Equal(t, http.StatusBadRequest, got.StatusCode, "%s %s: %s %s", client.id, name, got.location(), got.body)
				require.NotContains(t, got.location()+got.body, "code=", "%s %s", client.id, name)
			}
			// Nor by another spelling of the callback's path, which the
			// router sends past the check to the library's routes.
			for _, path := range []string{"/oidc/authorize%2Fcallback", "/oidc/authoriz%65/callback", "/oidc/authorize/c%61llback",
				"/oidc/authorize/callback/", "/oidc//authorize/callback", "/oidc/./authorize/callback", "/oidc/authorize/callback/.",
				"/oidc/x/../authorize/callback", "/oidc/Authorize/callback", "/oidc/authorize/callback%2F", "/oidc/authorize%2fcallback",
				"//oidc/authorize/callback", "/oidc/authorize/callback;", "/oidc%2Fauthorize%2Fcallback"} {
				got := e.get(attacker, strings.Replace(callback, "/oidc/authorize/callback", path, 1))
				require.NotEqual(t, http.StatusFound, got.StatusCode, "%s %s: %s", client.id, path, got.location())
				require.NotContains(t, got.location()+got.body, "code=", "%s %s", client.id, path)
			}

			tok, id, err := r.exchange(r.codeFrom(e.get(victim, callback), a), a)
			require.NoError(t, err, client.id)
			require.NotEmpty(t, tok.AccessToken)
			require.NotEmpty(t, id.Subject)
			info := r.userinfo(tok.AccessToken)
			require.Equal(t, http.StatusOK, info.StatusCode, info.body)
			require.Contains(t, info.body, `"email":"`+ada+`"`, "the victim's tokens went to the victim's client")
		}
	})
}
