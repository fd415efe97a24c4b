package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDCodeFlow: a signed-in user allows an application on the
// consent page; the application exchanges the code (PKCE, client secret)
// for an ID token that verifies against the published keys, with the
// nonce echoed and the user's claims; userinfo answers the access token.
// Once allowed, the next authorization asks nothing. Both session
// strategies, both databases.
func TestOpenIDCodeFlow(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startOP(t, b, nil)
			c := e.signedIn("ada@example.com")
			r := e.relyingParty("app", rpSecret)

			page, a := r.authorize(c)
			require.Contains(t, page.body, "Example App")
			res := e.consent(c, page, "allow")
			tok, id, err := r.exchange(r.codeFrom(res, a), a)
			require.NoError(t, err)
			var claims struct {
				Email    string `json:"email"`
				Verified bool   `json:"email_verified"`
				AuthTime int64  `json:"auth_time"`
			}
			require.NoError(t, id.Claims(&claims))
			require.Equal(t, "ada@example.com", claims.Email)
			require.True(t, claims.Verified)
			require.NotZero(t, claims.AuthTime)

			info, err := r.provider.UserInfo(r.ctx(), r.oauth.TokenSource(r.ctx(), tok))
			require.NoError(t, err)
			require.Equal(t, id.Subject, info.Subject)
			require.Equal(t, "ada@example.com", info.Email)

			// Consent is remembered: straight back to the client.
			res, a = r.authorize(c)
			_, _, err = r.exchange(r.codeFrom(res, a), a)
			require.NoError(t, err)
			require.Equal(t, http.StatusFound, res.StatusCode)
		})
	}
}
