package app_test

import (
	"html"
	"net/http"
	"net/url"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// TestOpenIDWaitsThroughTwoFactor: an authorization request waits while the
// user signs in with a password and the second step, then resumes; the
// ID token says how (amr pwd, otp, mfa; acr mfa), and so does the ID
// token of a refresh (OpenID Connect Core §12.2: its acr was missing, the
// library sets it from an authorization request only). Every backend.
func TestOpenIDWaitsThroughTwoFactor(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startTwoFactor(t, b, func(c *config.Config) {
				c.OpenID.Enabled = true
				c.OpenID.Clients = opClients()
			})
			e.addPasswordUser("ada@example.com", goodPassword, true)
			owner := e.browser()
			require.Equal(t, http.StatusOK, e.passwordSignIn(owner, "ada@example.com", goodPassword).StatusCode)
			secret, _ := e.enrol(owner)

			r := e.relyingParty("tool", rpSecret, offline...)
			c := e.browser()
			res, a := r.authorize(c)
			require.Equal(t, http.StatusOK, res.StatusCode, "the sign-in page")
			require.Contains(t, res.body, `name="password"`)
			resume := regexpFind(t, res.body, `name="callbackUrl" value="([^"]+)"`)
			resume = html.UnescapeString(resume)
			require.Contains(t, resume, "/oidc/continue?id=")

			form := url.Values{"email": {"ada@example.com"}, "password": {goodPassword}, "redirect": {"false"},
				"callbackUrl": {resume}, "csrfToken": {e.csrf(c)}, "json": {"true"}}
			e.requireHeld(c, e.post(c, "/callback/credentials", form), "TwoFactorRequired")
			step := e.get(c, "/two-factor")
			require.Equal(t, resume, html.UnescapeString(regexpFind(t, step.body, `name="callbackUrl" value="([^"]+)"`)),
				"the second step's page carries the waiting request on")
			done := e.postCode(c, e.code(secret), "callbackUrl", resume)
			require.Equal(t, http.StatusOK, done.StatusCode, done.body)
			require.Equal(t, resume, done.json(t)["url"], "the sign-in goes on to the waiting request")

			tok, id, err := r.exchange(r.codeFrom(e.follow(c, resume), a), a)
			require.NoError(t, err)
			tok, err = r.refresh(tok.RefreshToken)
			require.NoError(t, err)
			refreshed, err := r.verify(tok)
			require.NoError(t, err)
			for name, id := range map[string]*oidc.IDToken{"code": id, "refresh": refreshed} {
				var claims struct {
					AMR []string `json:"amr"`
					ACR string   `json:"acr"`
				}
				require.NoError(t, id.Claims(&claims))
				require.ElementsMatch(t, []string{"pwd", "otp", "mfa"}, claims.AMR, name)
				require.Equal(t, "mfa", claims.ACR, name)
			}
		})
	}
}
