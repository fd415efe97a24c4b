package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
)

// An identity provider's answer is read up to a limit (1 MiB, as
// golang.org/x/oauth2 reads token responses), not whole into memory
// however large: a discovery document or key set over it fails the
// sign-in (OAuthSignin before the IdP, OAuthCallback after it) with
// nothing created.
func TestOAuthIdPAnswersOverTheLimit(t *testing.T) {
	pad := func(path string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return rewriteJSON(next, path, func(doc map[string]any) { doc["padding"] = strings.Repeat("x", 2<<20) })
		}
	}
	t.Run("discovery document", func(t *testing.T) {
		e := startEnv(t, envOpts{ownURL: true, idp: true, idpWrap: pad(mockoidc.DiscoveryEndpoint)})
		res := e.post(noRedirects(e.client), "/signin/idp", url.Values{"csrfToken": {e.csrf(e.client)}})
		e.requireError(res, "OAuthSignin")
		requireNothingCreated(t, e)
	})
	t.Run("key set", func(t *testing.T) {
		e := startEnv(t, envOpts{ownURL: true, idp: true, idpWrap: pad(mockoidc.JWKSEndpoint)})
		s := steps{e, e.client}
		e.requireError(s.get(s.toCallback(s.toIdP()).String()), "OAuthCallback")
		requireNothingCreated(t, e)
	})
}
