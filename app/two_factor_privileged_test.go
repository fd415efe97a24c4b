package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// A password session from before two-factor was turned on cannot make
// itself a way past the code: once the owner turns it on elsewhere, new
// recovery codes and a new passkey need a session that used the second
// factor. The intruder is sent to the step-up form and nothing changes
// (the owner's codes keep working, no codes are shown); the owner, once
// stepped up, makes a new set and is told by e-mail.
func TestTwoFactorSettingsNeedTheSecondFactor(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startTwoFactor(t, b, func(c *config.Config) {
				c.ServiceURL = strings.Replace(c.ServiceURL, "127.0.0.1", "localhost", 1)
				c.Providers = append(c.Providers, config.Provider{ID: "passkey", Type: config.TypeWebAuthn})
			})
			e.addPasswordUser("ada@example.com", goodPassword, true)
			intruder := e.browser()
			require.Equal(t, http.StatusOK, e.passwordSignIn(intruder, "ada@example.com", goodPassword).StatusCode)
			owner := e.browser()
			e.passwordSignIn(owner, "ada@example.com", goodPassword)
			secret, codes := e.enrol(owner)
			mails := e.mailCount()

			res := e.form(intruder, "/account/two-factor/recovery-codes")
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.True(t, strings.HasPrefix(res.location(), e.base+"/two-factor?"), "to the step-up form: %s", res.location())
			to, err := url.Parse(res.location())
			require.NoError(t, err)
			require.Equal(t, e.base+"/account/two-factor", to.Query().Get("callbackUrl"))
			require.Empty(t, recoveryCode.FindAllString(res.body, -1), "no codes shown")
			require.Equal(t, mails, e.mailCount())

			res = e.get(intruder, "/webauthn-options/passkey?action=register")
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, "no passkey options: %s", res.body)
			require.NotContains(t, res.body, "challenge")

			// The owner's codes still work: nothing changed.
			other := e.browser()
			e.requireHeld(other, e.passwordSignIn(other, "ada@example.com", goodPassword), "TwoFactorRequired")
			require.Equal(t, http.StatusOK, e.postCode(other, codes[0]).StatusCode, "the owner's recovery code")

			// The owner steps up with a code: then a new set, and an e-mail.
			stepUp := e.form(owner, "/callback/two-factor", "code", e.code(secret), "callbackUrl", e.base+"/account/two-factor")
			require.Equal(t, http.StatusFound, stepUp.StatusCode, stepUp.body)
			require.Equal(t, "pwd,otp,mfa", e.amr(owner))
			mails = e.mailCount()
			res = e.form(owner, "/account/two-factor/recovery-codes")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Len(t, recoveryCode.FindAllString(res.body, -1), 10)
			require.Equal(t, mails+1, e.mailCount(), "the address is told")
			require.Contains(t, e.mailAt(mails+1).Subject, "recovery codes")
			require.Equal(t, http.StatusOK, e.get(owner, "/webauthn-options/passkey?action=register").StatusCode)
		})
	}
}

// Removing a passkey is guarded as adding one is: a password session from
// before the owner turned two-factor on is sent back with SessionRequired
// and removes nothing (it could strip the owner's passkeys), a session
// that used the second factor removes one, and even that session, more
// than 10 minutes after signing in, is refused until it signs in again.
func TestPasskeyRemovalNeedsTheSecondFactor(t *testing.T) {
	e := startTwoFactor(t, backends()[0], func(c *config.Config) {
		c.ServiceURL = strings.Replace(c.ServiceURL, "127.0.0.1", "localhost", 1)
		c.Providers = append(c.Providers, config.Provider{ID: "passkey", Type: config.TypeWebAuthn})
	})
	e.addPasswordUser("ada@example.com", goodPassword, true)
	uid := e.userID("ada@example.com")
	intruder := e.browser()
	require.Equal(t, http.StatusOK, e.passwordSignIn(intruder, "ada@example.com", goodPassword).StatusCode)
	owner := e.browser()
	e.passwordSignIn(owner, "ada@example.com", goodPassword)
	e.addPasskey(owner, e.newKey(), "one")
	e.addPasskey(owner, e.newKey(), "two")
	secret, _ := e.enrol(owner)
	keys := e.passkeysOf(uid)
	mails := e.mailCount()

	remove := func(c *http.Client, id string) string {
		res := e.post(c, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(c)}, "id": {id}})
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		return res.location()
	}
	require.Equal(t, e.base+"/passkeys?error=SessionRequired", remove(intruder, keys[0].ID))
	require.Len(t, e.passkeysOf(uid), 2, "nothing removed")
	require.Equal(t, mails, e.mailCount(), "nothing told")
	require.Contains(t, e.get(intruder, "/passkeys?error=SessionRequired").body, "sign in again")

	stepUp := e.form(owner, "/callback/two-factor", "code", e.code(secret), "callbackUrl", e.base+"/passkeys")
	require.Equal(t, http.StatusFound, stepUp.StatusCode, stepUp.body)
	require.Equal(t, e.base+"/passkeys", remove(owner, keys[0].ID))
	require.Len(t, e.passkeysOf(uid), 1)

	e.clock.Add(11 * time.Minute)
	defer e.clock.Add(-11 * time.Minute)
	require.Equal(t, e.base+"/passkeys?error=SessionRequired", remove(owner, keys[1].ID))
	require.Len(t, e.passkeysOf(uid), 1, "a stale session removes nothing")
}
