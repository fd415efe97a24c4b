package app_test

import (
	"net/http"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/test/refreshidp"
)

// tokenOps are the document's operations of the provider tokens.
var tokenOps = []string{"GET /token/{provider}"}

// tokens drives GET /token/:provider on an instance of its own (an OIDC
// provider with store_tokens on a refresh-rotating IdP, a settable clock)
// through every answer the document lists, and GET /session's error.
// TestOpenAPIMatchesRealResponses runs it in each session strategy and
// cookie style.
func (a apiDriver) tokens() {
	t := a.e.t
	idp := refreshidp.New(time.Hour)
	clock := &testClock{now: time.Now()}
	te := startEnv(t, envOpts{strategy: a.e.cfg.Session.Strategy, clock: clock, idpWrap: idp.Middleware}.oidc(func(c *config.Config) {
		c.Cookies.Style = a.e.cfg.Cookies.Style
		c.Providers[0].StoreTokens = true
		c.Tokens.ClientSecret = clientSecret
	}, nil))
	d := a.checkedOn(te)
	c := d.following()
	te.signIn(c, "idp", "/home")
	get := func(c *http.Client, provider string, headers ...string) resp {
		req := d.request(http.MethodGet, "/token/"+provider, "", "")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		return te.do(c, req)
	}
	bearer := []string{"Authorization", "Bearer " + clientSecret}
	require.Equal(t, http.StatusOK, get(c, "idp", bearer...).StatusCode)
	require.Equal(t, http.StatusUnauthorized, get(d.browser(), "idp", bearer...).StatusCode)
	require.Equal(t, http.StatusForbidden, get(c, "idp").StatusCode)
	require.Equal(t, http.StatusForbidden, get(c, "idp", "Authorization", "Bearer "+clientSecret, "Origin", "https://evil.example").StatusCode)
	require.Equal(t, http.StatusNotFound, get(c, "nope", bearer...).StatusCode)

	clock.Add(2 * time.Hour)
	idp.SetDown(true)
	require.Equal(t, http.StatusBadGateway, get(c, "idp", bearer...).StatusCode)
	idp.SetDown(false)
	idp.Revoke()
	r := get(c, "idp", bearer...)
	require.Equal(t, http.StatusUnauthorized, r.StatusCode)
	require.Equal(t, "RefreshAccessTokenError", r.json(t)["error"])
	require.Equal(t, "RefreshAccessTokenError", te.session(c)["error"], "GET /session's error, checked against the document")

	require.NoError(t, te.app.Store().Close())
	r = get(c, "idp", bearer...)
	require.Equal(t, http.StatusServiceUnavailable, r.StatusCode, r.body)
	require.NotEmpty(t, r.Header.Get("Retry-After"))

	d.v.requireCovered(t, tokenOps)
}
