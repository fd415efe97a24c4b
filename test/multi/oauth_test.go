package multi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
)

// An OAuth sign-in started on A (POST /signin/idp) whose callback lands on
// B completes: the state is recomputed from the CSRF cookie and the check
// cookie (PKCE verifier, nonce) opens on B, both keyed by the shared
// AUTH_SECRET, and the session B starts is seen on A. The same callback
// replayed on A afterwards, with the cookies it carried, signs nobody in.
func TestOAuthCallbackOnAnotherInstance(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	a, b := c.nodes[0], c.nodes[1]
	c.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-dan", Email: "dan@example.com", EmailVerified: true, PreferredUsername: "dan"})
	br := c.browser()

	r := br.post(a.url("/signin/idp"), url.Values{"csrfToken": {br.csrf(a)}, "callbackUrl": {c.origin() + "/app"}})
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	require.True(t, strings.HasPrefix(r.location(), c.idp.AuthorizationEndpoint()), r.location())
	authz := mustURL(t, r.location()).Query()
	require.Equal(t, c.publicURL("/callback/idp"), authz.Get("redirect_uri"), "the IdP returns to SERVICE_URL, whichever instance that reaches")

	r = br.get(r.location()) // the IdP signs the user in and sends the browser back
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	callback := r.location()
	require.True(t, strings.HasPrefix(callback, c.publicURL("/callback/idp?")), callback)
	sent := cookieHeader(br, b.url("/callback/idp"))

	r = br.get(c.at(b, callback))
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(t, c.origin()+"/app", r.location())
	require.Equal(t, "dan@example.com", br.email(b))
	require.Equal(t, "dan@example.com", br.email(a), "the session B started is seen on A")
	require.Equal(t, 1, c.count("sessions"))
	require.Equal(t, 1, c.count("accounts WHERE provider = 'idp' AND provider_account_id = 'sub-dan'"))

	// A replay of the whole callback request on the other instance. Each
	// instance remembers only the attempts it spent itself, so A lets the
	// check cookie through; the IdP's single-use code stops it.
	req, err := http.NewRequest(http.MethodGet, c.at(a, callback), nil)
	require.NoError(t, err)
	req.Header.Set("Cookie", sent)
	r, err = c.browser().do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(t, c.publicURL("/error?error=OAuthCallback"), r.location())
	require.Equal(t, 1, c.count("sessions"), "the replay started no session")
}

// cookieHeader is the Cookie header br would send to target.
func cookieHeader(br *browser, target string) string {
	var parts []string
	for _, ck := range br.client.Jar.Cookies(mustURL(br.t, target)) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}
