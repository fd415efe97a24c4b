package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// A password sign-in of a user with two-factor holds the sign-in: no
// session until a code; a wrong or replayed code is refused and changes
// nothing; the right one starts a session recording both factors; the
// spent pending step cannot be finished again.
func TestTwoFactorSignIn(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startTwoFactor(t, b, nil)
			e.addPasswordUser("ada@example.com", goodPassword, true)
			owner := e.browser()
			res := e.passwordSignIn(owner, "ada@example.com", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, "no two-factor yet: signed in at once")
			require.Equal(t, "pwd", e.amr(owner))
			secret, _ := e.enrol(owner)
			require.Contains(t, e.mailAt(e.mailCount()).Subject, "Two-factor", "the address is told")

			c := e.browser()
			e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
			require.Equal(t, "", e.amr(c), "forward-auth sees no session either")
			pending, _ := e.jarCookie(c, "next-auth.second-step")
			posing := e.browser() // the pending step passed off as a session cookie
			e.setJarCookie(posing, "next-auth.session-token", pending)
			require.Empty(t, e.session(posing))

			page := e.get(c, "/two-factor")
			require.Equal(t, http.StatusOK, page.StatusCode, "%s %s %s", page.location(), pending, e.logs.String())
			require.Contains(t, page.body, `name="code"`)
			require.Contains(t, page.body, `action="`+e.base+`/callback/two-factor"`)

			e.requireCodeRefused(e.postCode(c, "000000"), http.StatusUnauthorized, "TwoFactorInvalid")
			require.Empty(t, e.session(c))
			res = e.postCode(c, e.code(secret))
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/home", res.json(t)["url"])
			addr, _ := e.sessionUser(c)
			require.Equal(t, "ada@example.com", addr)
			require.Equal(t, "pwd,otp,mfa", e.amr(c))
			_, still := e.jarCookie(c, "next-auth.second-step")
			require.False(t, still, "the spent step's cookie is cleared")

			// The same code in another browser: a replay.
			other := e.browser()
			e.requireHeld(other, e.passwordSignIn(other, "ada@example.com", goodPassword), "TwoFactorRequired")
			e.requireCodeRefused(e.postCode(other, e.code(secret)), http.StatusUnauthorized, "TwoFactorInvalid")
			require.Empty(t, e.session(other))

			// The spent step's cookie, kept by an attacker: gone.
			thief := e.browser()
			e.setJarCookieAt(thief, "next-auth.second-step", pending, e.path)
			e.nextStep()
			e.requireCodeRefused(e.postCode(thief, e.code(secret)), http.StatusUnauthorized, "TwoFactorExpired")
			require.Empty(t, e.session(thief))
			require.NotContains(t, e.logs.String(), secret, "the secret is never logged")
		})
	}
}

// A recovery code signs in once, even when two pending sign-ins post it
// at the same moment, and the address is told.
func TestTwoFactorRecoveryCode(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startTwoFactor(t, backend{strategy: config.StrategyDatabase, postgres: pg}, nil)
		e.addPasswordUser("ada@example.com", goodPassword, true)
		owner := e.browser()
		e.passwordSignIn(owner, "ada@example.com", goodPassword)
		_, codes := e.enrol(owner)

		var browsers []*http.Client
		for range 4 {
			c := e.browser()
			e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
			browsers = append(browsers, c)
		}
		mails := e.mailCount()
		var wins atomic.Int32
		var wg sync.WaitGroup
		for _, c := range browsers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				form := url.Values{"code": {strings.ToUpper(codes[0])}, "csrfToken": {e.csrf(c)}, "json": {"true"}}
				req, _ := http.NewRequest(http.MethodPost, e.url("/callback/two-factor"), strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				res, err := c.Do(req)
				if err == nil {
					res.Body.Close()
					if res.StatusCode == http.StatusOK {
						wins.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		require.EqualValues(t, 1, wins.Load(), "one recovery code, one sign-in")
		signedIn := 0
		for _, c := range browsers {
			if len(e.session(c)) > 0 {
				signedIn++
				require.Equal(t, "pwd,recovery,mfa", e.amr(c))
			}
		}
		require.Equal(t, 1, signedIn)
		require.Contains(t, e.mailAt(mails+1).Subject, "recovery code")

		// A double submit: the second post of the form, refused (its code
		// spent by the first), sends the browser to the second-step page,
		// which the first post's session reaches. That session has its
		// second factor: the page goes on to callbackUrl rather than ask
		// for another code, and a code posted anyway is not spent.
		var winner *http.Client
		for _, c := range browsers {
			if len(e.session(c)) > 0 {
				winner = c
			}
		}
		home := e.origin + "/home"
		res := e.get(winner, "/two-factor?"+url.Values{"callbackUrl": {home}, "error": {"TwoFactorInvalid"}}.Encode())
		require.Equal(t, http.StatusFound, res.StatusCode, "no form for a session that has its second factor: %s", res.body)
		require.Equal(t, home, res.location())
		res = e.postCode(winner, codes[1])
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		require.Equal(t, home, res.json(t)["url"])
		left, err := twofactorstore.New(e.app.Store()).UnusedRecoveryCodes(context.Background(), e.userID("ada@example.com"))
		require.NoError(t, err)
		require.Equal(t, 9, len(left), "the second code is not spent")
		require.Equal(t, "pwd,recovery,mfa", e.amr(winner))
	})
}

// "Remember this device" skips the code on that browser until signing out
// everywhere forgets it.
func TestTwoFactorRememberedDevice(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startTwoFactor(t, b, nil)
			e.addPasswordUser("ada@example.com", goodPassword, true)
			c := e.browser()
			e.passwordSignIn(c, "ada@example.com", goodPassword)
			secret, _ := e.enrol(c)
			e.form(c, "/signout")

			e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
			res := e.postCode(c, e.code(secret), "remember", "on")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			_, ok := e.jarCookie(c, "next-auth.two-factor-device")
			require.True(t, ok, "the browser is remembered")
			e.form(c, "/signout")

			res = e.passwordSignIn(c, "ada@example.com", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, "a remembered browser skips the code: %s", res.body)
			require.Equal(t, "pwd,device,mfa", e.amr(c))

			other := e.browser() // not remembered
			e.requireHeld(other, e.passwordSignIn(other, "ada@example.com", goodPassword), "TwoFactorRequired")

			res = e.form(c, "/signout/all")
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			e.clock.Add(2 * time.Second) // past the second jwt sessions were revoked in
			e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
		})
	}
}

// A policy that requires two-factor sends a user without it to enrolment
// right after the first factor, before any session exists; confirming
// the app's code starts the session.
func TestTwoFactorRequiredPolicyEnrolsFirst(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startTwoFactor(t, b, func(c *config.Config) {
				c.TwoFactor.Mode, c.TwoFactor.RequiredFor = config.TwoFactorRequired, []string{"example.com"}
			})
			e.addPasswordUser("ada@example.com", goodPassword, true)
			e.addPasswordUser("bob@elsewhere.test", goodPassword, true)

			free := e.browser()
			require.Equal(t, http.StatusOK, e.passwordSignIn(free, "bob@elsewhere.test", goodPassword).StatusCode, "an address the policy does not name")

			c := e.browser()
			e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorSetupRequired")
			res := e.get(c, "/two-factor")
			require.Equal(t, http.StatusFound, res.StatusCode)
			require.Contains(t, res.location(), "/account/two-factor")
			e.requireCodeRefused(e.postCode(c, "123456"), http.StatusUnauthorized, "TwoFactorSetupRequired")

			page := e.get(c, "/account/two-factor")
			require.Equal(t, http.StatusOK, page.StatusCode, page.body)
			secret := e.secretOf(page.body)
			require.Empty(t, e.session(c), "showing the setup starts nothing")
			res = e.form(c, "/account/two-factor/enable", "code", e.code(secret), "callbackUrl", e.origin+"/home")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Len(t, recoveryCode.FindAllString(res.body, -1), 10)
			require.Contains(t, res.body, e.origin+"/home", "continue goes where the sign-in was headed")
			addr, _ := e.sessionUser(c)
			require.Equal(t, "ada@example.com", addr)
			require.Equal(t, "pwd,otp,mfa", e.amr(c))

			// The policy requires it for this user: the settings do not
			// offer turning it off, and a posted form is refused with the
			// reason, spending no code; the admin's reset is the way out.
			codes := recoveryCode.FindAllString(res.body, -1)
			page = e.get(c, "/account/two-factor?lang=fr")
			require.Equal(t, http.StatusOK, page.StatusCode, page.body)
			require.NotContains(t, page.body, "/account/two-factor/disable", "no form to turn it off")
			require.Contains(t, page.body, "Votre organisation exige la connexion en deux étapes pour votre compte")
			mails := e.mailCount()
			res = e.form(c, "/account/two-factor/disable", "code", codes[0], "lang", "fr")
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			to, err := url.Parse(res.location())
			require.NoError(t, err)
			require.Equal(t, e.path+"/account/two-factor", to.Path, "back to the settings")
			require.Equal(t, []string{"TwoFactorRequiredByPolicy", "fr"}, []string{to.Query().Get("error"), to.Query().Get("lang")})
			page = e.get(c, e.local(res.location()))
			require.Contains(t, page.body, "Votre organisation exige la connexion en deux étapes pour votre compte")
			require.Contains(t, page.body, "10", "no recovery code spent")
			require.Equal(t, mails, e.mailCount(), "nothing told: nothing changed")
			other := e.browser()
			e.requireHeld(other, e.passwordSignIn(other, "ada@example.com", goodPassword), "TwoFactorRequired")
			require.Equal(t, http.StatusOK, e.postCode(other, codes[0]).StatusCode, "still on, the code unspent")
		})
	}
}

// A pending step dies after five minutes, and after five attempts.
func TestTwoFactorPendingStepLimits(t *testing.T) {
	e := startTwoFactor(t, backends()[0], nil)
	e.addPasswordUser("ada@example.com", goodPassword, true)
	owner := e.browser()
	e.passwordSignIn(owner, "ada@example.com", goodPassword)
	secret, _ := e.enrol(owner)

	c := e.browser()
	e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
	e.clock.Add(5*time.Minute + time.Second)
	e.requireCodeRefused(e.postCode(c, e.code(secret)), http.StatusUnauthorized, "TwoFactorExpired")
	require.Empty(t, e.session(c))

	e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
	for range 5 {
		e.requireCodeRefused(e.postCode(c, "999999"), http.StatusUnauthorized, "TwoFactorInvalid")
	}
	// Five wrong codes in a row: the user's codes wait, in every browser.
	other := e.browser()
	e.requireHeld(other, e.passwordSignIn(other, "ada@example.com", goodPassword), "TwoFactorRequired")
	e.requireCodeRefused(e.postCode(other, e.code(secret)), http.StatusTooManyRequests, "TwoFactorThrottled")
	require.Empty(t, e.session(other))
	e.clock.Add(31 * time.Second) // past the user's backoff
	e.requireCodeRefused(e.postCode(c, e.code(secret)), http.StatusUnauthorized, "TwoFactorExpired")
	require.Empty(t, e.session(c), "the step that used its five attempts is void")
	res := e.postCode(other, e.code(secret))
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)

	// Forged and oversized input: documented answers, never a 500.
	e.setJarCookieAt(c, "next-auth.second-step", "forged", e.path)
	e.requireCodeRefused(e.postCode(c, e.code(secret)), http.StatusUnauthorized, "TwoFactorExpired")
	e.requireCodeRefused(e.postCode(c, strings.Repeat("9", 4000)), http.StatusUnauthorized, "TwoFactorExpired")
	require.NotContains(t, e.logs.String(), secret)
}

// TestTwoFactorMalformedCodesSpendNothing: input that cannot be a code
// (not six digits, not a recovery code's shape) is refused as a wrong
// code is, TwoFactorInvalid, but spends neither the pending step's five
// attempts nor a step towards the user's backoff, at enrolment and at
// sign-in: after more of them than either limit allows, the right code
// still signs in.
func TestTwoFactorMalformedCodesSpendNothing(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startTwoFactor(t, backend{name: "database", strategy: config.StrategyDatabase, postgres: pg}, func(c *config.Config) {
			c.TwoFactor.Mode, c.TwoFactor.RequiredFor = config.TwoFactorRequired, []string{"example.com"}
		})
		e.addPasswordUser("ada@example.com", goodPassword, true)
		malformed := []string{"", "abcdef", "12345", "1234567", "12 34 56", "aaaa-aaaa-aa", "abcd-efgh-ijk1"}

		c := e.browser()
		e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorSetupRequired")
		secret := e.secretOf(e.get(c, "/account/two-factor").body)
		for _, in := range append(malformed, "abcd-efgh-ijkl") { // a recovery code's shape is no code at enrolment
			res := e.form(c, "/account/two-factor/enable", "code", in)
			require.Equal(t, http.StatusFound, res.StatusCode, "%q: %s", in, res.body)
			require.Contains(t, res.location(), "error=TwoFactorInvalid", in)
		}
		res := e.form(c, "/account/two-factor/enable", "code", e.code(secret))
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		addr, _ := e.sessionUser(c)
		require.Equal(t, "ada@example.com", addr)
		e.nextStep()

		c = e.browser()
		e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
		for _, in := range malformed {
			e.requireCodeRefused(e.postCode(c, in), http.StatusUnauthorized, "TwoFactorInvalid")
		}
		res = e.postCode(c, e.code(secret))
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		addr, _ = e.sessionUser(c)
		require.Equal(t, "ada@example.com", addr)
	})
}

// A passkey whose authenticator verified the user is two factors: no code.
func TestTwoFactorPasskeySkipsTheCode(t *testing.T) {
	e := startMail(t, envOpts{clock: &testClock{now: time.Now().UTC().Truncate(time.Second)}, config: twoFactorConfig(func(c *config.Config) {
		c.ServiceURL = strings.Replace(c.ServiceURL, "127.0.0.1", "localhost", 1)
		c.Providers = append(c.Providers, config.Provider{ID: "passkey", Type: config.TypeWebAuthn})
	})})
	owner := e.browser()
	e.emailSignIn(owner, "ada@example.com")
	k := e.newKey()
	e.addPasskey(owner, k, "laptop")
	e.enrol(owner)

	c := e.browser()
	res := e.passkeySignIn(c, k)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.origin+"/dashboard", res.location(), "no second step")
	require.Equal(t, "hwk,mfa", e.amr(c))

	// An e-mail link is one factor: the code is asked for.
	mail := e.browser()
	link := e.emailLink(mail, "ada@example.com", e.origin+"/home")
	res = e.get(mail, e.local(link))
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), e.base+"/two-factor?")
	require.Empty(t, e.session(mail))
}

// Turning two-factor off takes a code and a recent sign-in, tells the
// address, and forgets the secret.
func TestTwoFactorDisable(t *testing.T) {
	e := startTwoFactor(t, backends()[0], nil)
	e.addPasswordUser("ada@example.com", goodPassword, true)
	c := e.browser()
	e.passwordSignIn(c, "ada@example.com", goodPassword)
	_, codes := e.enrol(c)

	res := e.form(c, "/account/two-factor/disable", "code", "nope")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "error=TwoFactorInvalid")
	page := e.get(c, "/account/two-factor")
	require.Contains(t, page.body, "/account/two-factor/disable", "still on")

	e.clock.Add(11 * time.Minute)
	res = e.form(c, "/account/two-factor/disable", "code", codes[0])
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/signin?callbackUrl=", "an old session signs in again first")

	e.form(c, "/signout")
	e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
	res = e.postCode(c, codes[1])
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	mails := e.mailCount()
	res = e.form(c, "/account/two-factor/disable", "code", codes[2], "lang", "fr")
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.base+"/account/two-factor?notice=disabled&lang=fr", res.location(), "back on the page in its language")
	require.Contains(t, e.mailAt(mails+1).Subject, "La connexion en deux étapes a été désactivée")
	st, err := twofactorstore.New(e.app.Store()).TwoFactorOf(context.Background(), e.userID("ada@example.com"))
	require.Error(t, err, "the secret and codes are gone: %+v", st)

	e.form(c, "/signout")
	require.Equal(t, http.StatusOK, e.passwordSignIn(c, "ada@example.com", goodPassword).StatusCode, "off: one factor again")
}

// A forward-auth host whose rule requires two factors sends a one-factor
// session to the step-up, whose code raises the session.
func TestTwoFactorForwardAuthStepUp(t *testing.T) {
	e := startTwoFactor(t, backends()[0], func(c *config.Config) {
		c.TrustedProxies = []string{"127.0.0.0/8"}
		c.AllowedRedirectOrigins = []string{"https://admin.example.test"}
		c.Access = []config.AccessRule{{Hosts: []string{"admin.example.test"}, Anyone: true, TwoFactor: true}, {Hosts: []string{"*"}, Anyone: true}}
	})
	e.addPasswordUser("ada@example.com", goodPassword, true)
	c := e.browser()
	e.passwordSignIn(c, "ada@example.com", goodPassword)
	secret, _ := e.enrol(c) // enrolling does not change the running session

	ask := func(host string) resp {
		u, _ := url.Parse(e.srv.URL)
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/authz/forward-auth", nil)
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("X-Forwarded-Host", host)
		req.Header.Set("X-Forwarded-Uri", "/panel")
		for _, ck := range c.Jar.Cookies(u) {
			req.AddCookie(ck)
		}
		return e.do(&http.Client{CheckRedirect: stopAtRedirect}, req)
	}
	res := ask("app.example.test")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "pwd", res.Header.Get("Remote-Amr"))
	res = ask("admin.example.test")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.True(t, strings.HasPrefix(res.location(), e.base+"/two-factor?callbackUrl="), res.location())

	page := e.get(c, "/two-factor")
	require.Equal(t, http.StatusOK, page.StatusCode, page.body)
	res = e.postCode(c, e.code(secret))
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	require.NotEmpty(t, e.session(c))
	res = ask("admin.example.test")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "pwd,otp,mfa", res.Header.Get("Remote-Amr"))
}

// Adding a passkey asks whether two-factor is in force for the user; when
// that cannot be read (the database fails: here its table gone), the
// answer is the server's ("try again later"), not "sign in again", which
// no sign-in would mend; nothing is stored.
func TestTwoFactorUnreadablePasskeyAddingTriesLater(t *testing.T) {
	e := startMail(t, envOpts{clock: &testClock{now: time.Now().UTC().Truncate(time.Second)}, config: twoFactorConfig(func(c *config.Config) {
		c.ServiceURL = strings.Replace(c.ServiceURL, "127.0.0.1", "localhost", 1)
		c.Providers = append(c.Providers, config.Provider{ID: "passkey", Type: config.TypeWebAuthn})
	})})
	c := e.browser()
	uid := e.emailSignIn(c, "ada@example.com")
	opts := e.passkeyOptions(c, "register")
	require.NoError(t, e.app.Store().DB().Exec("DROP TABLE two_factors").Error)

	res := e.get(c, "/webauthn-options/passkey?action=register")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, res.body)
	require.Contains(t, res.body, "Try again later")

	res = e.passkeyAnswer(c, "register", e.newKey().create(opts), nil)
	require.Equal(t, e.base+"/passkeys?error=Callback", res.location())
	require.Empty(t, e.passkeysOf(uid))
	require.Regexp(t, `level=ERROR msg="request failed" path=\S+/webauthn-options/passkey`, e.logs.String())
	require.Regexp(t, `level=ERROR msg="passkey not added" code=Callback`, e.logs.String())
}
