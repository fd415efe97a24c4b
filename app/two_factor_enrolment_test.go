package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A secret shown by the setup page belongs to the browser it was shown to,
// for 10 minutes: another browser that opens the setup (the owner, later)
// gets a new secret, and a code of the first one turns nothing on
// (TwoFactorInvalid); the same browser reloading sees the same secret.
func TestTwoFactorSetupSecretIsTheBrowsers(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startTwoFactor(t, b, nil)
			e.addPasswordUser("ada@example.com", goodPassword, true)
			x := e.browser()
			e.passwordSignIn(x, "ada@example.com", goodPassword)
			page := e.get(x, "/account/two-factor")
			require.Equal(t, http.StatusOK, page.StatusCode)
			shown := e.secretOf(page.body)
			require.Equal(t, shown, e.secretOf(e.get(x, "/account/two-factor").body), "a reload shows the same secret")

			e.clock.Add(time.Minute)
			owner := e.browser()
			e.passwordSignIn(owner, "ada@example.com", goodPassword)
			page = e.get(owner, "/account/two-factor")
			require.Equal(t, http.StatusOK, page.StatusCode)
			require.NotEqual(t, shown, e.secretOf(page.body), "the owner gets a secret of their own")

			res := e.form(x, "/account/two-factor/enable", "code", e.code(shown))
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Contains(t, res.location(), "error=TwoFactorInvalid")
			require.Empty(t, recoveryCode.FindAllString(res.body, -1))

			// Left for longer than 10 minutes, a secret is not shown again.
			later := e.browser()
			e.clock.Add(15 * time.Minute)
			e.passwordSignIn(later, "ada@example.com", goodPassword)
			first := e.secretOf(e.get(later, "/account/two-factor").body)
			e.clock.Add(11 * time.Minute)
			e.passwordSignIn(later, "ada@example.com", goodPassword)
			require.NotEqual(t, first, e.secretOf(e.get(later, "/account/two-factor").body))

			e.passwordSignIn(owner, "ada@example.com", goodPassword)
			secret, _ := e.enrol(owner)
			e.nextStep()
			c := e.browser()
			e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
			e.requireCodeRefused(e.postCode(c, e.code(shown)), http.StatusUnauthorized, "TwoFactorInvalid")
			require.Equal(t, http.StatusOK, e.postCode(c, e.code(secret)).StatusCode)
		})
	}
}
