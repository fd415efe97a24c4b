package app_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/metrics/metricstest"
)

// Two instances on one PostgreSQL: enrol on A; a sign-in held on A is
// finished with the code on B (the pending step and the secret live in the
// database, sealed under the shared secret); the code's step is spent for
// both.
func TestTwoFactorAcrossInstances(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	a := startPasswords(t, envOpts{postgres: true, clock: clock, config: twoFactorConfig(nil)})
	b := startPasswords(t, envOpts{clock: clock, smtp: &smtptest.Options{}, config: twoFactorConfig(func(c *config.Config) {
		c.DatabaseURL = a.cfg.DatabaseURL
	})})
	a.addPasswordUser("ada@example.com", goodPassword, true)
	owner := a.browser()
	a.passwordSignIn(owner, "ada@example.com", goodPassword)
	secret, _ := a.enrol(owner)

	c := a.browser() // one host, two ports: one cookie jar for both, as behind a balancer
	a.requireHeld(c, a.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
	code := b.code(secret)
	res := b.postCode(c, code)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	for _, e := range []*env{a, b} {
		addr, _ := e.sessionUser(c)
		require.Equal(t, "ada@example.com", addr)
	}
	other := b.browser()
	b.requireHeld(other, b.passwordSignIn(other, "ada@example.com", goodPassword), "TwoFactorRequired")
	a.requireCodeRefused(a.postCode(other, code), http.StatusUnauthorized, "TwoFactorInvalid")
}

// A password reset forgets every remembered browser.
func TestTwoFactorResetForgetsRememberedBrowsers(t *testing.T) {
	e := startTwoFactor(t, backends()[0], nil)
	e.addPasswordUser("ada@example.com", goodPassword, true)
	c, _ := e.rememberedBrowser("ada@example.com")

	n := e.mailCount()
	e.form(e.browser(), "/reset", "email", "ada@example.com")
	link, _ := e.flowLink(n+1, "/reset/confirm")
	res := e.form(e.browser(), "/reset/confirm", "token", linkQuery(t, link).Get("token"), "password", otherPassword)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", otherPassword), "TwoFactorRequired")
}

// Changing the password forgets every remembered browser, as a reset
// does: the remembered one asks for the code again with the new password.
func TestTwoFactorPasswordChangeForgetsRememberedBrowsers(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startTwoFactor(t, b, nil)
			e.addPasswordUser("ada@example.com", goodPassword, true)
			c, secret := e.rememberedBrowser("ada@example.com")

			e.nextStep()
			elsewhere := e.browser()
			e.requireHeld(elsewhere, e.passwordSignIn(elsewhere, "ada@example.com", goodPassword), "TwoFactorRequired")
			require.Equal(t, http.StatusOK, e.postCode(elsewhere, e.code(secret)).StatusCode)
			res := e.form(elsewhere, "/account/password", "currentPassword", goodPassword, "password", otherPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.True(t, e.passwordIs(e.userID("ada@example.com"), otherPassword), "the password changed")
			e.clock.Add(2 * time.Second) // past the second jwt sessions were revoked in
			e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", otherPassword), "TwoFactorRequired")
		})
	}
}

// Enrolling, new recovery codes and turning it off need a sign-in within
// the window of adding a passkey; a new set of codes voids the old.
func TestTwoFactorSettingsNeedARecentSignIn(t *testing.T) {
	e := startTwoFactor(t, backends()[0], nil)
	e.addPasswordUser("ada@example.com", goodPassword, true)
	c := e.browser()
	e.passwordSignIn(c, "ada@example.com", goodPassword)
	e.clock.Add(11 * time.Minute)
	res := e.get(c, "/account/two-factor")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.True(t, strings.HasPrefix(res.location(), e.base+"/signin?callbackUrl="), res.location())
	require.Equal(t, http.StatusFound, e.form(c, "/account/two-factor/enable", "code", "123456").StatusCode)

	e.passwordSignIn(c, "ada@example.com", goodPassword)
	secret, codes := e.enrol(c)
	res = e.form(c, "/account/two-factor/recovery-codes")
	require.Equal(t, http.StatusFound, res.StatusCode, "the session did not use the second factor: step up first")
	require.Equal(t, http.StatusFound, e.form(c, "/callback/two-factor", "code", e.code(secret)).StatusCode, "the step-up")
	e.nextStep()
	res = e.form(c, "/account/two-factor/recovery-codes")
	require.Equal(t, http.StatusOK, res.StatusCode)
	fresh := recoveryCode.FindAllString(res.body, -1)
	require.Len(t, fresh, 10)
	page := e.get(c, "/account/two-factor")
	require.Equal(t, http.StatusOK, page.StatusCode)
	require.NotContains(t, page.body, secret, "the settings page never shows the secret again")

	e.clock.Add(11 * time.Minute)
	res = e.form(c, "/account/two-factor/recovery-codes")
	require.Equal(t, http.StatusFound, res.StatusCode, "an old session signs in again first")

	other := e.browser()
	e.requireHeld(other, e.passwordSignIn(other, "ada@example.com", goodPassword), "TwoFactorRequired")
	e.requireCodeRefused(e.postCode(other, codes[0]), http.StatusUnauthorized, "TwoFactorInvalid")
	require.Equal(t, http.StatusOK, e.postCode(other, fresh[0]).StatusCode)
}

// An OAuth sign-in of a user with two-factor goes through the second-step
// page and then on to its callbackUrl, as a browser follows it.
func TestTwoFactorAfterOAuth(t *testing.T) {
	e := startEnv(t, envOpts{clock: &testClock{now: time.Now().UTC().Truncate(time.Second)}}.oidc(twoFactorConfig(nil), nil))
	c := e.following(e.browser())
	res := e.signIn(c, "idp", e.origin+"/home")
	require.Equal(t, e.origin+"/home", res.location(), res.body)
	secret, _ := e.enrol(c)
	e.form(c, "/signout")

	res = e.signIn(c, "idp", e.origin+"/app")
	require.Equal(t, http.StatusOK, res.StatusCode, "the browser stops on the second-step page: %s", res.location())
	require.Contains(t, res.body, `name="code"`)
	require.Empty(t, e.session(c))
	form := map[string][]string{"code": {e.code(secret)}, "csrfToken": {e.csrf(c)}, "callbackUrl": {e.origin + "/app"}}
	res = e.post(noRedirects(c), "/callback/two-factor", form)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.origin+"/app", res.location())
	require.Equal(t, "fed,otp,mfa", e.amr(c))
}

// Second steps are counted by outcome: success and each refusal's code.
func TestTwoFactorMetrics(t *testing.T) {
	e := startTwoFactor(t, backends()[0], func(c *config.Config) { c.Metrics.Listen = "127.0.0.1:0" })
	e.addPasswordUser("ada@example.com", goodPassword, true)
	c := e.browser()
	e.passwordSignIn(c, "ada@example.com", goodPassword)
	secret, _ := e.enrol(c)
	e.form(c, "/signout")
	e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
	e.postCode(c, "111111")
	e.postCode(c, "222222")
	require.Equal(t, http.StatusOK, e.postCode(c, e.code(secret)).StatusCode)
	e.postCode(e.browser(), "333333") // no pending step, no session

	rec := httptest.NewRecorder()
	e.app.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	s := metricstest.Parse(t, bytes.NewReader(rec.Body.Bytes()))
	require.Equal(t, 2.0, s.Value("latchkey_second_steps_total", "outcome", "success"), "the enrolment and the sign-in")
	require.Equal(t, 2.0, s.Value("latchkey_second_steps_total", "outcome", "TwoFactorInvalid"))
	require.Equal(t, 1.0, s.Value("latchkey_second_steps_total", "outcome", "TwoFactorExpired"))
	require.NotContains(t, rec.Body.String(), secret)
}

// Signing out ends a pending second step, not only the session: the
// cookie goes and its row with it, so neither the next person at the
// browser nor a copy of the cookie can finish it. Under `required` a
// pending enrolment kept past the sign-out let anyone at the browser
// enrol their own app and have the user's session.
func TestTwoFactorSignOutEndsThePendingStep(t *testing.T) {
	e := startTwoFactor(t, backends()[0], func(c *config.Config) { c.TwoFactor.Mode = config.TwoFactorRequired })
	e.addPasswordUser("ada@example.com", goodPassword, true)

	c := e.browser()
	e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorSetupRequired")
	copied, _ := e.jarCookie(c, "next-auth.second-step")
	require.Equal(t, http.StatusFound, e.form(c, "/signout").StatusCode)
	_, still := e.jarCookie(c, "next-auth.second-step")
	require.False(t, still, "the pending enrolment's cookie is cleared")
	kept := e.browser() // the cookie, copied before the sign-out
	e.setJarCookieAt(kept, "next-auth.second-step", copied, e.path)
	for _, b := range []*http.Client{c, kept} {
		res := e.get(b, "/account/two-factor")
		require.Equal(t, http.StatusFound, res.StatusCode, "no setup after the sign-out: %s", res.body)
		require.Contains(t, res.location(), e.base+"/signin")
	}
	require.Empty(t, e.session(kept))

	// A code step, too: the right code after the sign-out starts nothing.
	owner := e.browser()
	e.requireHeld(owner, e.passwordSignIn(owner, "ada@example.com", goodPassword), "TwoFactorSetupRequired")
	secret := e.secretOf(e.get(owner, "/account/two-factor").body)
	require.Equal(t, http.StatusOK, e.form(owner, "/account/two-factor/enable", "code", e.code(secret)).StatusCode)
	e.nextStep()
	e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
	copied, _ = e.jarCookie(c, "next-auth.second-step")
	require.Equal(t, http.StatusFound, e.form(c, "/signout").StatusCode)
	e.setJarCookieAt(kept, "next-auth.second-step", copied, e.path)
	e.requireCodeRefused(e.postCode(kept, e.code(secret)), http.StatusUnauthorized, "TwoFactorExpired")
	require.Empty(t, e.session(kept))

	// The step cannot be ended (the database fails: here its table gone):
	// the session still ends and both cookies go, and the answer is no
	// reported sign-out.
	e.addPasswordUser("bob@example.com", goodPassword, true)
	both := e.browser() // bob's session, and ada's pending step
	e.requireHeld(both, e.passwordSignIn(both, "bob@example.com", goodPassword), "TwoFactorSetupRequired")
	bobs := e.secretOf(e.get(both, "/account/two-factor").body)
	require.Equal(t, http.StatusOK, e.form(both, "/account/two-factor/enable", "code", e.code(bobs)).StatusCode)
	require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(both, "ada@example.com", goodPassword).StatusCode)
	_, held := e.jarCookie(both, "next-auth.second-step")
	require.True(t, held)
	require.NotEmpty(t, e.session(both), "bob's session from before")
	require.NoError(t, e.app.Store().DB().Exec("DROP TABLE second_steps").Error)
	res := e.form(both, "/signout")
	require.Contains(t, res.location(), "error=Configuration", "no reported sign-out")
	require.Empty(t, e.session(both), "the session ended all the same")
	_, still = e.jarCookie(both, "next-auth.second-step")
	require.False(t, still)
}

// Two browsers held for enrolment under `required`: once one has turned
// two-factor on, the other's pending enrolment is void and starts over at
// the sign-in page (which asks for the code). It sent the setup page to
// itself, a redirect loop, until the step expired.
func TestTwoFactorEnrolmentFinishedElsewhere(t *testing.T) {
	e := startTwoFactor(t, backends()[0], func(c *config.Config) { c.TwoFactor.Mode = config.TwoFactorRequired })
	e.addPasswordUser("ada@example.com", goodPassword, true)
	late, first := e.browser(), e.browser()
	e.requireHeld(late, e.passwordSignIn(late, "ada@example.com", goodPassword), "TwoFactorSetupRequired")
	e.requireHeld(first, e.passwordSignIn(first, "ada@example.com", goodPassword), "TwoFactorSetupRequired")
	secret := e.secretOf(e.get(first, "/account/two-factor").body)
	require.Equal(t, http.StatusOK, e.form(first, "/account/two-factor/enable", "code", e.code(secret)).StatusCode)

	for _, page := range []string{"/account/two-factor", "/two-factor"} {
		res := e.get(late, page)
		require.Equal(t, http.StatusFound, res.StatusCode, page)
		require.Contains(t, res.location(), e.base+"/signin?", page)
	}
	e.nextStep()
	res := e.form(late, "/account/two-factor/enable", "code", e.code(secret))
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), e.base+"/signin?", "the void enrolment starts over")
	require.Empty(t, e.session(late))
	e.requireHeld(late, e.passwordSignIn(late, "ada@example.com", goodPassword), "TwoFactorRequired")
}

// A password reset ends the user's pending second steps: the old
// password's half sign-ins die with it. Under `required` an intruder's
// pending enrolment (made with the old password) outlived the owner's
// reset: they enrolled their own app afterwards and had a session that
// the reset was meant to end, with their app as the owner's second factor.
func TestTwoFactorResetEndsPendingSteps(t *testing.T) {
	e := startTwoFactor(t, backends()[0], func(c *config.Config) { c.TwoFactor.Mode = config.TwoFactorRequired })
	e.addPasswordUser("ada@example.com", goodPassword, true)
	intruder := e.browser()
	e.requireHeld(intruder, e.passwordSignIn(intruder, "ada@example.com", goodPassword), "TwoFactorSetupRequired")

	n := e.mailCount()
	e.form(e.browser(), "/reset", "email", "ada@example.com")
	link, _ := e.flowLink(n+1, "/reset/confirm")
	res := e.form(e.browser(), "/reset/confirm", "token", linkQuery(t, link).Get("token"), "password", otherPassword)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)

	res = e.get(intruder, "/account/two-factor")
	require.Equal(t, http.StatusFound, res.StatusCode, "no setup with the old password's step")
	require.Contains(t, res.location(), e.base+"/signin?")
	require.Empty(t, e.session(intruder))
}
