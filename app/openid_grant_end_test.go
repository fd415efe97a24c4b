package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDPendingCodesEndWithTheGrant: revoking an application on the
// account page, or signing out of it (RP-initiated logout), ends what its
// grant had in flight as well as its tokens: a code handed out but not yet
// exchanged is refused at the token endpoint, and a request completed but
// not yet answered (the browser on its way to the code) gets the dead-link
// page, not a code. They lived on for the request's ten minutes.
func TestOpenIDPendingCodesEndWithTheGrant(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("app", rpSecret, offline...)
		r.signInFlow(c) // the consent

		res, a := r.authorize(c)
		code := r.codeFrom(res, a)
		target, _ := r.authorizeURL()
		res = e.get(c, e.get(c, target).location()) // completed: on its way to the library's callback
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		callback := res.location()
		require.True(t, strings.HasPrefix(callback, e.base+"/oidc/authorize/callback?"), callback)

		out := e.post(c, "/revoke-app", url.Values{"csrfToken": {e.csrf(c)}, "clientId": {"app"}, "json": {"true"}})
		require.Equal(t, http.StatusOK, out.StatusCode, out.body)
		_, _, err := r.exchange(code, a)
		requireGrantRefused(t, err)
		res = e.get(c, callback)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, res.body)
		require.Empty(t, res.location())

		tok, _ := r.signInFlow(c)
		res, a = r.authorize(c)
		code = r.codeFrom(res, a)
		res = e.post(c, "/oidc/end_session", url.Values{"id_token_hint": {rawIDToken(t, tok)}, "post_logout_redirect_uri": {rpLogout}})
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		res = e.follow(c, res.location())
		require.True(t, strings.HasPrefix(res.location(), rpLogout), res.location())
		_, _, err = r.exchange(code, a)
		requireGrantRefused(t, err)
		_, live := e.oidcTokens()
		require.Zero(t, live)
	})
}
