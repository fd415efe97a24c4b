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

			res = e.get(intruder, "/webauthn-options/passkey?action=register&lang=de")
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, "no passkey options: %s", res.body)
			require.NotContains(t, res.body, "challenge")
			require.Equal(t, e.base+"/two-factor?"+url.Values{"callbackUrl": {e.base + "/passkeys"}}.Encode()+"&lang=de", res.json(t)["url"],
				"the page's script goes to the step-up form")

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
// before the owner turned two-factor on is sent to the step-up form, as
// the two-factor settings send it, and removes nothing (it could strip the
// owner's passkeys); the same for an answer to register options it got
// before two-factor was on (nothing added). A session that used the second
// factor removes one, and even that session, more than 10 minutes after
// signing in, is refused until it signs in again.
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
	late := e.newKey()
	lateOptions := e.passkeyOptions(intruder, "register") // before two-factor is on
	secret, _ := e.enrol(owner)
	keys := e.passkeysOf(uid)
	mails := e.mailCount()

	remove := func(c *http.Client, id string, extra ...string) string {
		form := url.Values{"csrfToken": {e.csrf(c)}, "id": {id}}
		for i := 0; i+1 < len(extra); i += 2 {
			form.Set(extra[i], extra[i+1])
		}
		res := e.post(c, "/passkeys/remove", form)
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		return res.location()
	}
	stepUpForm := e.base + "/two-factor?" + url.Values{"callbackUrl": {e.base + "/passkeys"}}.Encode()
	require.Equal(t, stepUpForm, remove(intruder, keys[0].ID))
	require.Equal(t, stepUpForm+"&lang=fr", remove(intruder, keys[0].ID, "lang", "fr"), "in the page's language")
	require.Len(t, e.passkeysOf(uid), 2, "nothing removed")
	require.Equal(t, mails, e.mailCount(), "nothing told")
	page := e.get(intruder, e.local(stepUpForm))
	require.Equal(t, http.StatusOK, page.StatusCode, page.body)
	require.Contains(t, page.body, `autocomplete="one-time-code"`, "the step-up form")
	res := e.passkeyAnswer(intruder, "register", late.create(lateOptions), url.Values{"name": {"late"}})
	require.Equal(t, stepUpForm, res.location(), "an answer to options from before two-factor was on")
	require.Len(t, e.passkeysOf(uid), 2, "nothing added")

	stepUp := e.form(owner, "/callback/two-factor", "code", e.code(secret), "callbackUrl", e.base+"/passkeys")
	require.Equal(t, http.StatusFound, stepUp.StatusCode, stepUp.body)
	require.Equal(t, e.base+"/passkeys", remove(owner, keys[0].ID))
	require.Len(t, e.passkeysOf(uid), 1)

	e.clock.Add(11 * time.Minute)
	defer e.clock.Add(-11 * time.Minute)
	require.Equal(t, e.base+"/passkeys?error=SessionRequired", remove(owner, keys[1].ID))
	require.Len(t, e.passkeysOf(uid), 1, "a stale session removes nothing")
}

// The account page's changes that hand the account over — changing the
// e-mail address (then a password reset there takes it), linking an
// identity, unlinking one, deleting the account — need the second factor
// as the passkey changes do: a recent password session from before the
// owner turned two-factor on is sent to the step-up form (in the page's
// language, back to the page; JSON gets SessionRequired with the form's
// url) and changes nothing, however it links (the page's form or the
// next-auth client's signIn); the owner, stepped up, may.
func TestAccountChangesNeedTheSecondFactor(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}.oidc(twoFactorConfig(nil), nil)))
			e.addPasswordUser("ada@example.com", goodPassword, true)
			uid := e.userID("ada@example.com")
			intruder, owner := e.browser(), e.browser()
			require.Equal(t, http.StatusOK, e.passwordSignIn(intruder, "ada@example.com", goodPassword).StatusCode)
			e.passwordSignIn(owner, "ada@example.com", goodPassword)
			e.idp.QueueUser(user("ada-idp", "ada@idp.example"))
			res := e.post(e.following(owner), "/link-account", url.Values{"csrfToken": {e.csrf(owner)}, "provider": {"idp"}})
			require.Equal(t, e.base+"/account", res.Request.URL.String(), "linked before two-factor: %s", res.body)
			linked := e.accountsOf(owner)
			require.Len(t, linked, 1)
			secret, _ := e.enrol(owner)
			mails := e.mailCount()

			stepUpForm := e.base + "/two-factor?" + url.Values{"callbackUrl": {e.base + "/account"}}.Encode()
			for _, change := range [][]string{
				{"/change-email", "email", "mallory@evil.example"},
				{"/unlink-account", "id", linked[0]["id"].(string)},
				{"/link-account", "provider", "idp"},
				{"/delete-user", "confirm", "ada@example.com"},
			} {
				res := e.form(intruder, change[0], append(change[1:], "lang", "fr")...)
				require.Equal(t, http.StatusFound, res.StatusCode, "%s: %s", change[0], res.body)
				require.Equal(t, stepUpForm+"&lang=fr", res.location(), change[0])
				res = e.apiPost(intruder, change[0], change[1:]...)
				require.Equal(t, http.StatusForbidden, res.StatusCode, "%s: %s", change[0], res.body)
				require.Equal(t, map[string]any{"error": "SessionRequired", "url": stepUpForm}, res.json(t), change[0])
			}
			// The next-auth client's signIn("idp") while signed in links too.
			e.idp.QueueUser(user("mallory-idp", "mallory@evil.example"))
			requireChainEndsWith(t, e, e.following(intruder), "idp", "SessionRequired")

			require.Equal(t, mails, e.mailCount(), "nothing sent")
			require.Len(t, e.accountsOf(owner), 1, "nothing linked or unlinked")
			addr, id := e.sessionUser(intruder)
			require.Equal(t, []string{"ada@example.com", uid}, []string{addr, id}, "the account and its address stand")

			stepUp := e.form(owner, "/callback/two-factor", "code", e.code(secret), "callbackUrl", e.base+"/account")
			require.Equal(t, http.StatusFound, stepUp.StatusCode, stepUp.body)
			res = e.apiPost(owner, "/unlink-account", "id", linked[0]["id"].(string))
			require.Equal(t, http.StatusOK, res.StatusCode, "stepped up: %s", res.body)
			require.Empty(t, e.accountsOf(owner))
			e.idp.QueueUser(user("ada-idp2", "ada@idp.example"))
			res = e.post(e.following(owner), "/link-account", url.Values{"csrfToken": {e.csrf(owner)}, "provider": {"idp"}})
			require.Equal(t, e.base+"/account", res.Request.URL.String(), "stepped up, a link goes through: %s", res.body)
			require.Len(t, e.accountsOf(owner), 1)
			require.Contains(t, e.amr(owner), "mfa", "and the session keeps both factors")
		})
	}
}
