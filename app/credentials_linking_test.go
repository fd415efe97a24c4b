package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// A user who signed up with a password meets an OAuth sign-in with the
// same e-mail under the ordinary linking rules: refused
// (OAuthAccountNotLinked, nothing created) unless the provider allows
// dangerous e-mail linking, and then linked to that same user, whose
// password keeps working.
func TestPasswordUserThenOAuthFollowsLinkingRules(t *testing.T) {
	for _, dangerous := range []bool{false, true} {
		e := startEnv(t, envOpts{}.oidc(func(c *config.Config) {
			c.Providers[0].AllowDangerousEmailAccountLinking = dangerous
			c.Providers = append(c.Providers, config.Provider{Type: config.TypeCredentials, ID: "credentials"})
		}, nil))
		u := e.addPasswordUser("pw@example.com", goodPassword, true)
		e.idp.QueueUser(user("sub-pw", "PW@example.com"))
		if !dangerous {
			requireChainEndsWith(t, e, e.client, "idp", "OAuthAccountNotLinked")
			require.EqualValues(t, 1, e.counts().Users)
			require.Zero(t, e.counts().Accounts)
		} else {
			res := e.signIn(e.client, "idp", "/home")
			require.Equal(t, e.origin+"/home", res.location())
			addr, _ := e.sessionUser(e.client)
			require.Equal(t, "pw@example.com", addr)
			require.EqualValues(t, 1, e.counts().Users)
			require.Equal(t, u.ID, e.onlyAccount().UserID, "linked to the password user")
		}
		res := e.passwordSignIn(e.browser(), "pw@example.com", goodPassword)
		require.Equal(t, http.StatusOK, res.StatusCode, "the password still signs in (dangerous=%v): %s", dangerous, res.body)
	}
}
