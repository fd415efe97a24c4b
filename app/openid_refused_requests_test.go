package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDRefusedRequestEnds: an authorization request whose error was
// sent to the client — a denied consent, prompt=none's consent_required
// or login_required — is over: that browser cannot complete it afterwards
// (allow the consent it denied, sign in and come back to it) and get a
// code the client was already told it would not get; it gets the
// dead-link page. The request stayed open until it expired (10 minutes).
func TestOpenIDRefusedRequestEnds(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("app", rpSecret)
		allow := func(id string) resp {
			return e.post(c, "/oidc/consent", url.Values{"csrfToken": {e.csrf(c)}, "id": {id}, "decision": {"allow"}})
		}
		requireGone := func(res resp, what string) {
			t.Helper()
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s %s", what, res.location(), res.body)
			require.Empty(t, res.location(), what)
		}

		page, a := r.authorize(c)
		id := regexpFind(t, page.body, `name="id" value="([0-9a-f]+)"`)
		require.Equal(t, "access_denied", r.errorFrom(e.consent(c, page, "deny"), a))
		requireGone(allow(id), "allowed after denying")

		// prompt=none: the request's id is in the continue link the
		// browser passed through.
		started := func(c *http.Client) (string, resp, authorization) {
			target, a := r.authorizeURL("prompt", "none")
			next := e.get(c, target).location()
			require.True(t, strings.HasPrefix(next, e.base+"/oidc/continue?"), next)
			return next, e.get(c, next), a
		}
		next, res, a := started(c)
		require.Equal(t, "consent_required", r.errorFrom(res, a))
		requireGone(allow(regexpFind(t, next, `id=([0-9a-f]+)`)), "allowed after consent_required")

		other := e.browser()
		next, res, a = started(other)
		require.Equal(t, "login_required", r.errorFrom(res, a))
		e.signInByLink(other, ada)
		requireGone(e.get(other, next), "continued after login_required")
		all, _ := e.oidcTokens()
		require.Zero(t, all)
	})
}
