package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
)

// rewriteJSON is mockoidc middleware that changes the JSON object its
// endpoint path answers with change.
func rewriteJSON(next http.Handler, path string, change func(doc map[string]any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		change(doc)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	})
}

// advertiseIss is mockoidc middleware whose discovery document says the
// IdP sends RFC 9207's iss in every authorization response.
func advertiseIss(next http.Handler) http.Handler {
	return rewriteJSON(next, mockoidc.DiscoveryEndpoint, func(doc map[string]any) {
		doc["authorization_response_iss_parameter_supported"] = true
	})
}

// The mix-up defence of RFC 9207, as openid-client (next-auth v4) has it:
// an authorization response whose iss names another issuer than the
// provider's is refused before its code is redeemed (OAuthCallback,
// nothing created, no token request), as is one without iss from an
// issuer that says it always sends it. The provider's own iss passes.
func TestOAuthIssParameter(t *testing.T) {
	withIss := func(cb *url.URL, iss string) string {
		q := cb.Query()
		q.Set("iss", iss)
		cb.RawQuery = q.Encode()
		return cb.String()
	}
	t.Run("another issuer: refused before the code is redeemed", func(t *testing.T) {
		e, tap := startTapped(t, envOpts{})
		s := steps{e, e.client}
		e.requireError(s.get(withIss(s.toCallback(s.toIdP()), "https://evil.example/oidc")), "OAuthCallback")
		require.Zero(t, tap.requests(), "the code went to the token endpoint")
		requireNothingCreated(t, e)
		require.Equal(t, map[string]any{}, e.session(e.client))
	})
	t.Run("the provider's issuer: signed in", func(t *testing.T) {
		e, _ := startTapped(t, envOpts{})
		s := steps{e, e.client}
		require.Equal(t, e.origin+"/home", s.get(withIss(s.toCallback(s.toIdP()), e.idp.Issuer())).location())
	})
	t.Run("advertised but missing: refused", func(t *testing.T) {
		tap := &tokenTap{t: t}
		e := startEnv(t, envOpts{ownURL: true, idp: true, idpWrap: func(next http.Handler) http.Handler {
			return advertiseIss(tap.wrap(next))
		}})
		s := steps{e, e.client}
		e.requireError(s.get(s.toCallback(s.toIdP()).String()), "OAuthCallback")
		require.Zero(t, tap.requests(), "the code went to the token endpoint")
		requireNothingCreated(t, e)
	})
	t.Run("advertised and sent: signed in", func(t *testing.T) {
		e := startEnv(t, envOpts{ownURL: true, idp: true, idpWrap: advertiseIss})
		s := steps{e, e.client}
		require.Equal(t, e.origin+"/home", s.get(withIss(s.toCallback(s.toIdP()), e.idp.Issuer())).location())
	})
}
