package app_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
)

func TestOIDCSignInSessionSignOut(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startEnv(t, b.opts(envOpts{}.oidc(nil, nil)))
			e.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-1", Email: "Alice@Example.com", PreferredUsername: "alice"})

			require.Equal(t, map[string]any{}, e.session(e.client))
			res := e.signIn(e.client, "idp", "/dashboard")
			require.Equal(t, http.StatusFound, res.StatusCode)
			require.Equal(t, e.origin+"/dashboard", res.Header.Get("Location"))

			s := e.session(e.client)
			require.Equal(t, "alice@example.com", userEmail(s))
			require.NotEmpty(t, s["expires"])

			tok := e.csrf(e.client)
			res = e.post(noRedirects(e.client), "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {"/bye"}})
			require.Equal(t, http.StatusFound, res.StatusCode)
			require.Equal(t, e.origin+"/bye", res.Header.Get("Location"))
			require.Equal(t, map[string]any{}, e.session(e.client))
		})
	}
}
