package app_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDAuthorizationResponseIssuer: every answer the provider sends
// a client's redirect URI carries iss, the discovery document's issuer
// exactly (RFC 9207), and discovery says so
// (authorization_response_iss_parameter_supported), so a client that
// talks to several providers can tell which one answered (the mix-up
// defence): the code in the query and in the fragment, the library's
// refusal of a request (an unsupported response_mode), prompt=none's
// login_required and consent_required (in the fragment too), and a denied
// consent's access_denied.
func TestOpenIDAuthorizationResponseIssuer(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("tool", rpSecret)
		issuer, _ := r.discovered("issuer").(string)
		require.Equal(t, e.base, issuer)

		// answer is the parameters of a redirect to the client: its query,
		// or its fragment; it checks the state.
		answer := func(res resp, a authorization, fragment bool) url.Values {
			t.Helper()
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			u, err := url.Parse(res.location())
			require.NoError(t, err)
			require.Equal(t, rpRedirect, u.Scheme+"://"+u.Host+u.Path, res.location())
			q := u.Query()
			if fragment {
				q, err = url.ParseQuery(u.Fragment)
				require.NoError(t, err)
			}
			require.Equal(t, a.state, q.Get("state"), res.location())
			return q
		}
		requireIss := func(q url.Values, what string) {
			t.Helper()
			require.Equal(t, []string{issuer}, q["iss"], "%s: %v", what, q)
		}

		c := e.signedIn(ada)
		res, a := r.authorize(c)
		q := answer(res, a, false)
		requireIss(q, "code")
		_, _, err := r.exchange(q.Get("code"), a)
		require.NoError(t, err)

		res, a = r.authorize(c, "response_mode", "fragment")
		q = answer(res, a, true)
		requireIss(q, "code in the fragment")
		require.NotEmpty(t, q.Get("code"))

		res, a = r.authorize(c, "response_mode", "form_post")
		q = answer(res, a, false)
		require.Equal(t, "invalid_request", q.Get("error"))
		requireIss(q, "invalid_request")

		res, a = r.authorize(e.browser(), "prompt", "none")
		q = answer(res, a, false)
		require.Equal(t, "login_required", q.Get("error"))
		requireIss(q, "login_required")

		res, a = r.authorize(e.browser(), "prompt", "none", "response_mode", "fragment")
		q = answer(res, a, true)
		require.Equal(t, "login_required", q.Get("error"))
		requireIss(q, "login_required in the fragment")

		app := e.relyingParty("app", rpSecret)
		res, a = app.authorize(c, "prompt", "none")
		q = answer(res, a, false)
		require.Equal(t, "consent_required", q.Get("error"))
		requireIss(q, "consent_required")

		page, a := app.authorize(c)
		q = answer(e.consent(c, page, "deny"), a, false)
		require.Equal(t, "access_denied", q.Get("error"))
		requireIss(q, "access_denied")

		require.Equal(t, true, r.discovered("authorization_response_iss_parameter_supported"))
	})
}
