package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
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

// A provider's profile is text of a bounded size before it becomes a
// user, on every database and session strategy: a name loses its control
// characters (a NUL, which PostgreSQL refuses and SQLite stores) and is cut
// to 256 characters (a 200 000-character one made the jwt session cookie
// too large to come back, so the "signed-in" user had no session); an
// image that is not an http(s) URL, and an address that is not text, are
// dropped; an id that is not text fails the sign-in (OAuthCallback,
// nothing created): it cannot be changed without naming someone else.
func TestOAuthHostileProfile(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Run("name, image, e-mail", func(t *testing.T) {
				e, tap := startTapped(t, b.opts(envOpts{}))
				tap.set(e, nil, func(c map[string]any) {
					c["name"] = "Ev\x00il\r\n" + strings.Repeat("N", 200000)
					c["picture"] = "javascript:alert(1)"
					c["email"] = "a\x00b@example.com"
				})
				s := steps{e, e.client}
				require.Equal(t, e.origin+"/home", s.get(s.toCallback(s.toIdP()).String()).location())
				u, _ := e.session(e.client)["user"].(map[string]any)
				require.NotNil(t, u, "the session came back")
				require.Equal(t, "Evil"+strings.Repeat("N", 252), u["name"])
				require.Nil(t, u["image"])
				require.Nil(t, u["email"])
				stored := e.onlyUser()
				require.Equal(t, "Evil"+strings.Repeat("N", 252), *stored.Name)
				require.Nil(t, stored.Image)
				require.Nil(t, stored.Email)
			})
			t.Run("subject", func(t *testing.T) {
				e, tap := startTapped(t, b.opts(envOpts{}))
				tap.set(e, nil, func(c map[string]any) { c["sub"] = "victim\x00" })
				s := steps{e, e.client}
				e.requireError(s.get(s.toCallback(s.toIdP()).String()), "OAuthCallback")
				requireNothingCreated(t, e)
			})
		})
	}
}
