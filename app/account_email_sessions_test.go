package app_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// TestEmailChangeReachesEverySession: once the address changes, no
// session goes on naming the old one to forward-auth or GET /session —
// where another user may own it by then, and access rules by address
// would admit the wrong one. A database session reads the user with its
// row: every browser shows the new address. A JWT carries the address it
// was minted with: the browser that confirmed the change (when it is the
// user's) gets a token naming the new address, its sign-in otherwise as
// it was; every other sign-in of the user ends. Before, a JWT session
// named the old, verified address until it signed in again (up to
// absolute_max_age), while a new user held it.
func TestEmailChangeReachesEverySession(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			e.addPasswordUser("ada@example.com", goodPassword, true)
			c, other := e.browser(), e.browser()
			e.passwordSignIn(c, "ada@example.com", goodPassword)
			e.passwordSignIn(other, "ada@example.com", goodPassword)

			n := e.mailCount()
			res := e.apiPost(c, "/change-email", "email", "ada.new@example.com")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			link, _ := e.flowLink(n+1, "/account/email/confirm")
			token := linkQuery(t, link).Get("token")
			res = e.post(c, "/account/email/confirm", url.Values{"csrfToken": {e.csrf(c)}, "token": {token}, "json": {"true"}})
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			e.addPasswordUser("ada@example.com", goodPassword, true) // someone else takes the old address

			fa := e.authz(c, authRequestPath)
			require.Equal(t, http.StatusOK, fa.StatusCode, "the confirming browser stays signed in")
			require.Equal(t, "ada.new@example.com", fa.Header.Get("Remote-Email"))
			addr, _ := e.sessionUser(c)
			require.Equal(t, "ada.new@example.com", addr)

			fa = e.authz(other, authRequestPath)
			if b.strategy == config.StrategyJWT {
				require.Equal(t, http.StatusUnauthorized, fa.StatusCode, "a token naming the old address: %s", fa.Header.Get("Remote-Email"))
				require.Empty(t, e.session(other))
				return
			}
			require.Equal(t, http.StatusOK, fa.StatusCode)
			require.Equal(t, "ada.new@example.com", fa.Header.Get("Remote-Email"))
		})
	}
}

// An address change into two_factor.required_for is no way around it: the
// policy asks a user it requires to enrol before any session, so the
// change, once confirmed, ends every session of a user without two-factor
// (the confirming browser's too), and the next sign-in is the enrolment.
// Before, the sessions went on under the new address with one factor, and
// forward-auth's rules for that domain admitted them.
func TestEmailChangeIntoTheTwoFactorPolicyEnrolsFirst(t *testing.T) {
	e := startPasswords(t, envOpts{config: twoFactorConfig(func(c *config.Config) {
		c.TwoFactor.Mode = config.TwoFactorRequired
		c.TwoFactor.RequiredFor = []string{"corp.example"}
	})})
	e.addPasswordUser("ada@example.com", goodPassword, true)
	c, other := e.browser(), e.browser()
	require.Equal(t, http.StatusOK, e.passwordSignIn(c, "ada@example.com", goodPassword).StatusCode)
	require.Equal(t, http.StatusOK, e.passwordSignIn(other, "ada@example.com", goodPassword).StatusCode)

	res := e.changeEmail(c, "ada@corp.example")
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	require.Empty(t, e.session(c), "the confirming browser signs in again")
	require.Empty(t, e.session(other), "and so does every other")
	e.requireHeld(c, e.passwordSignIn(c, "ada@corp.example", goodPassword), "TwoFactorSetupRequired")
}
