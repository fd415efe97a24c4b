package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// passwordDeviceCookie is the password device cookie's name (http, next-auth style).
const passwordDeviceCookie = "next-auth.password-device"

// spendAccountTier has one attacker client fail on addr until the account
// tier blocks it (25 failures, past its 20 free ones): the clock moves past
// each pair block but the last, so the account stays blocked for a while.
func (e *env) spendAccountTier(addr, ip string) {
	e.t.Helper()
	for i := range 25 {
		res := e.passwordSignIn(e.browser(), addr, "wrong password", "X-Forwarded-For", ip)
		require.Equal(e.t, http.StatusUnauthorized, res.StatusCode, "failure %d", i+1)
		if i < 24 {
			e.clock.Add(5*time.Minute + time.Second)
		}
	}
}

// startCheapPw is startPw (SQLite or PostgreSQL, the client IP read from
// X-Forwarded-For). The tests spend the account tier again and again: they
// rely on the harness's cheap hasher (envOpts.realHasher).
func startCheapPw(t *testing.T, pg bool) *env {
	return startPw(t, envOpts{postgres: pg, config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
}

// withDevice is a fresh browser holding only the password device cookie value.
func (e *env) withDevice(value string) *http.Client {
	c := e.browser()
	e.setJarCookieAt(c, passwordDeviceCookie, value, e.path)
	return c
}

// An attacker failing from one IP blocks the account tier for clients the
// account never signed in from (as before). The owner's browser, which
// signed in before, carries a device cookie (sealed, HttpOnly, SameSite=Lax,
// base path, 30 days) and signs in at once from a new IP; without it, a
// new IP is still throttled; a forged cookie, or another account's, is no
// device cookie.
func TestPasswordDeviceCookieOutlivesAccountBlock(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPw(t, b.opts(envOpts{config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }}))
			e.addPasswordUser("alice@example.com", goodPassword, true)
			e.addPasswordUser("bob@example.com", goodPassword, true)
			from := func(c *http.Client, ip, addr, pw string) int {
				return e.passwordSignIn(c, addr, pw, "X-Forwarded-For", ip).StatusCode
			}

			victim := e.browser()
			res := e.passwordSignIn(victim, "alice@example.com", goodPassword, "X-Forwarded-For", "198.51.100.1")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			set, ok := findCookie(res.Header, passwordDeviceCookie)
			require.True(t, ok, "a password sign-in sets the device cookie")
			require.True(t, set.HttpOnly)
			require.Equal(t, http.SameSiteLaxMode, set.SameSite)
			require.Equal(t, e.path, set.Path)
			require.WithinDuration(t, e.now().Add(30*24*time.Hour), set.Expires, 2*time.Second)
			require.NotContains(t, set.Value, "alice")
			device, ok := e.jarCookie(victim, passwordDeviceCookie)
			require.True(t, ok)
			other := e.browser()
			require.Equal(t, http.StatusOK, from(other, "198.51.100.2", "bob@example.com", goodPassword))
			bobs, _ := e.jarCookie(other, passwordDeviceCookie)

			e.spendAccountTier("alice@example.com", "203.0.113.7")

			require.Equal(t, http.StatusUnauthorized, from(e.browser(), "192.0.2.10", "alice@example.com", goodPassword),
				"a new IP without the cookie waits, as before")
			require.Contains(t, e.logs.String(), "too many failed password sign-ins: account blocked")
			forged := device[:len(device)-4] + "AAAA"
			for name, v := range map[string]string{"another account's": bobs, "forged": forged, "junk": "not-a-device-cookie"} {
				require.Equal(t, http.StatusUnauthorized, from(e.withDevice(v), "192.0.2.11", "alice@example.com", goodPassword),
					"%s cookie is no exemption", name)
			}
			require.Equal(t, http.StatusOK, from(e.withDevice(device), "192.0.2.12", "alice@example.com", goodPassword),
				"the device cookie from an earlier sign-in: at once, from a new IP")
			require.NotContains(t, e.logs.String(), "alice@example.com")
		})
	}
}

// A device cookie's failures count against it (OWASP's device lock-out):
// after its 5 free failures, spread over new IPs so the pair tier never
// sees them, it is blocked like a pair, and it no longer exempts its
// browser from a blocked account.
func TestPasswordDeviceCookieLockOut(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startCheapPw(t, pg)
		from := func(c *http.Client, ip, addr, pw string) int {
			return e.passwordSignIn(c, addr, pw, "X-Forwarded-For", ip).StatusCode
		}
		ip := 0
		newIP := func() string { ip++; return "192.0.2." + strconv.Itoa(ip) }
		for _, addr := range []string{"alice@example.com", "carol@example.com"} {
			e.addPasswordUser(addr, goodPassword, true)
		}

		// The device tier: a sixth failure with the cookie blocks it.
		carol := e.browser()
		require.Equal(t, http.StatusOK, from(carol, newIP(), "carol@example.com", goodPassword))
		for i := range 6 {
			require.Equal(t, http.StatusUnauthorized, from(carol, newIP(), "carol@example.com", "wrong password"), "failure %d", i+1)
		}
		require.Equal(t, http.StatusUnauthorized, from(carol, newIP(), "carol@example.com", goodPassword), "the cookie is blocked")
		require.Contains(t, e.logs.String(), "too many failed password sign-ins: account and device cookie blocked")
		e.clock.Add(time.Second)
		require.Equal(t, http.StatusOK, from(carol, newIP(), "carol@example.com", goodPassword), "for 1 s")

		// Locked out: five failures with the cookie, and it no longer
		// gets past the attacker's account block.
		victim := e.browser()
		require.Equal(t, http.StatusOK, from(victim, newIP(), "alice@example.com", goodPassword))
		e.spendAccountTier("alice@example.com", "203.0.113.7")
		for i := range 5 {
			require.Equal(t, http.StatusUnauthorized, from(victim, newIP(), "alice@example.com", "wrong password"), "failure %d", i+1)
		}
		require.Equal(t, http.StatusUnauthorized, from(victim, newIP(), "alice@example.com", goodPassword))
		require.Contains(t, e.logs.String(), "too many failed password sign-ins: account blocked")
	})
}

// Instances sharing a database and the secret share device cookies, and
// a cookie sealed under a secret that a rotation moved down the list
// (AUTH_SECRET_1…) still counts; a revocation of the account's sessions
// voids it on the other instance too, once its poll has read it.
func TestPasswordDeviceCookieAcrossInstancesAndRotation(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	trust := func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }
	a := startPw(t, envOpts{postgres: true, strategy: config.StrategyJWT, clock: clock, config: trust})
	b := startPw(t, envOpts{strategy: config.StrategyJWT, clock: clock, config: func(c *config.Config) {
		trust(c)
		c.Session.RevocationPoll = config.Duration(100 * time.Millisecond)
		c.DatabaseURL = a.cfg.DatabaseURL
		c.RotationSecrets = []string{"rotated-secret-0123456789abcdef0123456789"}
	}})
	a.addPasswordUser("alice@example.com", goodPassword, true)
	victim := a.browser()
	require.Equal(t, http.StatusOK, a.passwordSignIn(victim, "alice@example.com", goodPassword, "X-Forwarded-For", "198.51.100.1").StatusCode)
	device, ok := a.jarCookie(victim, passwordDeviceCookie)
	require.True(t, ok)

	b.spendAccountTier("alice@example.com", "203.0.113.7")
	require.Equal(t, http.StatusUnauthorized, a.passwordSignIn(a.browser(), "alice@example.com", goodPassword, "X-Forwarded-For", "192.0.2.1").StatusCode)
	require.Equal(t, http.StatusOK, b.passwordSignIn(b.withDevice(device), "alice@example.com", goodPassword, "X-Forwarded-For", "192.0.2.2").StatusCode)

	// `latchkey sessions revoke --user` (a process of its own) voids it on
	// every instance once their poll read it, as it ends the JWT sessions.
	serveLoops(t, b.app)
	clock.Add(time.Second)
	_, uid := a.sessionUser(victim)
	require.NotEmpty(t, uid)
	_, err := a.app.Store().RevokeSessions(context.Background(), uid, clock.Now())
	require.NoError(t, err)
	require.Eventually(t, func() bool { addr, _ := b.sessionUser(victim); return addr == "" }, 5*time.Second, 20*time.Millisecond,
		"the other instance read the revocation")
	require.Equal(t, http.StatusUnauthorized, b.passwordSignIn(b.withDevice(device), "alice@example.com", goodPassword, "X-Forwarded-For", "192.0.2.3").StatusCode,
		"the device cookie is void there too")
}

// A device cookie is a sign-in's credential like a session: what ends the
// account's sessions (sign out everywhere, a password change, a reset,
// `latchkey sessions revoke`) voids the entries it issued before, so a
// copied browser profile no longer gets past a blocked account. A cookie
// issued by a sign-in after the revocation exempts as before.
func TestPasswordDeviceCookieEndsWithSessions(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startCheapPw(t, pg)
		e.addPasswordUser("alice@example.com", goodPassword, true)
		ip := 0
		newIP := func() string { ip++; return "192.0.2." + strconv.Itoa(ip) }
		signIn := func(c *http.Client, pw string) int {
			return e.passwordSignIn(c, "alice@example.com", pw, "X-Forwarded-For", newIP()).StatusCode
		}
		// blocked spends the account tier, then lets its block pass.
		blocked := func(run func()) {
			e.spendAccountTier("alice@example.com", "203.0.113.7")
			run()
			e.clock.Add(time.Hour + time.Minute)
		}

		victim := e.browser()
		require.Equal(t, http.StatusOK, signIn(victim, goodPassword))
		stolen, ok := e.jarCookie(victim, passwordDeviceCookie)
		require.True(t, ok)
		e.clock.Add(time.Second)
		res := e.post(victim, "/signout/all", url.Values{"csrfToken": {e.csrf(victim)}, "callbackUrl": {e.origin + "/bye"}})
		require.Equal(t, e.origin+"/bye", res.location(), res.body)
		blocked(func() {
			require.Equal(t, http.StatusUnauthorized, signIn(e.withDevice(stolen), goodPassword),
				"a device cookie from before sign out everywhere exempts nothing")
		})

		e.clock.Add(time.Second)
		require.Equal(t, http.StatusOK, signIn(victim, goodPassword))
		stolen, _ = e.jarCookie(victim, passwordDeviceCookie)
		e.clock.Add(time.Second)
		res = e.form(victim, "/account/password", "currentPassword", goodPassword, "password", otherPassword)
		require.Less(t, res.StatusCode, 400, res.body)
		e.clock.Add(time.Second)
		require.Equal(t, http.StatusOK, signIn(victim, otherPassword))
		fresh, _ := e.jarCookie(victim, passwordDeviceCookie)
		blocked(func() {
			require.Equal(t, http.StatusUnauthorized, signIn(e.withDevice(stolen), otherPassword),
				"nor one from before a password change")
			require.Equal(t, http.StatusOK, signIn(e.withDevice(fresh), otherPassword),
				"a cookie issued after the revocation exempts as before")
		})
	})
}

// The account page's password check counts in the sign-in's buckets, and
// reads the device cookie as the sign-in does: an owner whose account an
// attacker keeps blocked changes the password from a new IP with the
// browser's cookie (without it, "too many attempts", as before), and the
// browser gets a fresh cookie, signed in after the change ended every
// session, that passes the block at the next sign-in.
func TestAccountPasswordCheckReadsDeviceCookie(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startCheapPw(t, pg)
		e.addPasswordUser("alice@example.com", goodPassword, true)
		change := func(c *http.Client, ip string) resp {
			f := url.Values{"csrfToken": {e.csrf(c)}, "currentPassword": {goodPassword}, "password": {otherPassword}}
			return e.post(c, "/account/password", f, "X-Forwarded-For", ip)
		}
		victim := e.browser()
		require.Equal(t, http.StatusOK, e.passwordSignIn(victim, "alice@example.com", goodPassword, "X-Forwarded-For", "198.51.100.1").StatusCode)
		device, _ := e.jarCookie(victim, passwordDeviceCookie)
		e.spendAccountTier("alice@example.com", "203.0.113.7")

		noCookie := e.browser() // the same session, without the device cookie
		st, ok := e.jarCookie(victim, "next-auth.session-token")
		require.True(t, ok)
		e.setJarCookie(noCookie, "next-auth.session-token", st)
		require.Equal(t, http.StatusTooManyRequests, change(noCookie, "192.0.2.1").StatusCode, "without the cookie, as before")
		res := change(victim, "192.0.2.2")
		require.Equal(t, http.StatusOK, res.StatusCode, "with it, from a new IP")
		fresh, ok := e.jarCookie(victim, passwordDeviceCookie)
		require.True(t, ok)
		require.NotEqual(t, device, fresh, "a fresh cookie")
		require.Equal(t, http.StatusOK, e.passwordSignIn(victim, "alice@example.com", otherPassword, "X-Forwarded-For", "192.0.2.3").StatusCode,
			"which passes the block after the change")
	})
}

// A password reset voids the owner's device cookie with the sessions; the
// browser that completes it gets a fresh one, signed in after the reset,
// so an owner who resets while an attacker keeps the account blocked
// signs in next from a new IP at once (a copy of the old cookie still
// exempts nothing). When an unverified claimant held the address the
// password goes to a new user, and the cookie names that user: the
// owner's sign-out everywhere voids it.
func TestPasswordResetGivesFreshDeviceCookie(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startPasswords(t, envOpts{postgres: pg, config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
		ip := 0
		newIP := func() string { ip++; return "192.0.2." + strconv.Itoa(ip) }
		signIn := func(c *http.Client, addr, pw string) int {
			return e.passwordSignIn(c, addr, pw, "X-Forwarded-For", newIP()).StatusCode
		}
		reset := func(c *http.Client, addr string) string {
			n := e.mailCount()
			res := e.form(e.browser(), "/reset", "email", addr)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			link, _ := e.flowLink(n+1, "/reset/confirm")
			f := url.Values{"csrfToken": {e.csrf(c)}, "token": {linkQuery(t, link).Get("token")}, "password": {otherPassword}}
			res = e.post(c, "/reset/confirm", f, "X-Forwarded-For", newIP())
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			fresh, ok := e.jarCookie(c, passwordDeviceCookie)
			require.True(t, ok, "the reset's browser has a device cookie")
			return fresh
		}

		e.addPasswordUser("alice@example.com", goodPassword, true)
		victim := e.browser()
		require.Equal(t, http.StatusOK, signIn(victim, "alice@example.com", goodPassword))
		before, _ := e.jarCookie(victim, passwordDeviceCookie)
		e.clock.Add(time.Second)
		e.spendAccountTier("alice@example.com", "203.0.113.7")
		fresh := reset(victim, "alice@example.com")
		require.NotEqual(t, before, fresh, "a fresh cookie")
		require.Equal(t, http.StatusUnauthorized, signIn(e.withDevice(before), "alice@example.com", otherPassword),
			"the cookie from before the reset exempts nothing")
		require.Equal(t, http.StatusOK, signIn(victim, "alice@example.com", otherPassword),
			"the reset's browser passes the block")

		// The owner's proof wins over a claimant: the cookie is the new user's.
		const addr = "victim@example.com"
		claimed := addr
		claimant := &models.User{Email: &claimed}
		require.NoError(t, e.app.Store().CreateUserWithAccount(context.Background(), claimant,
			&models.Account{Type: "oauth", Provider: "nextcloud", ProviderAccountID: "attacker"}))
		owner := e.browser()
		fresh = reset(owner, addr)
		e.spendAccountTier(addr, "203.0.113.8")
		require.Equal(t, http.StatusOK, signIn(owner, addr, otherPassword), "the owner passes the block")
		_, id := e.sessionUser(owner)
		require.NotEqual(t, claimant.ID, id)
		e.clock.Add(time.Second)
		res := e.post(owner, "/signout/all", url.Values{"csrfToken": {e.csrf(owner)}, "callbackUrl": {e.origin + "/bye"}})
		require.Equal(t, e.origin+"/bye", res.location(), res.body)
		require.Equal(t, http.StatusUnauthorized, signIn(e.withDevice(fresh), addr, otherPassword),
			"the owner's sign-out everywhere voids the reset's cookie: it names the owner")
	})
}

// An IP the account signed in from is a known client (exempt from the
// account block an attacker raises) for the user who signed in, until
// what ends the user's sessions: after sign out everywhere the owner's
// IP waits like any other until the owner's next right password there.
// An address that changes hands (the user deleted, the address signed up
// again) does not hand the old user's IPs on to the new account.
func TestPasswordKnownIPEndsWithSessionsAndUser(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startCheapPw(t, pg)
		const addr, home = "alice@example.com", "198.51.100.1"
		first := e.addPasswordUser(addr, goodPassword, true)
		fromHome := func(pw string) int { // a fresh browser: no device cookie
			return e.passwordSignIn(e.browser(), addr, pw, "X-Forwarded-For", home).StatusCode
		}
		blocked := func(run func()) {
			e.spendAccountTier(addr, "203.0.113.7")
			run()
			e.clock.Add(time.Hour + time.Minute)
		}

		owner := e.browser()
		require.Equal(t, http.StatusOK, e.passwordSignIn(owner, addr, goodPassword, "X-Forwarded-For", home).StatusCode)
		blocked(func() {
			require.Equal(t, http.StatusOK, fromHome(goodPassword), "the owner's IP passes the block after an ordinary sign-in")
		})

		e.clock.Add(time.Second)
		res := e.post(owner, "/signout/all", url.Values{"csrfToken": {e.csrf(owner)}, "callbackUrl": {e.origin + "/bye"}})
		require.Equal(t, e.origin+"/bye", res.location(), res.body)
		blocked(func() {
			require.Equal(t, http.StatusUnauthorized, fromHome(goodPassword), "sign out everywhere voids the IP's exemption")
		})
		e.clock.Add(time.Second)
		require.Equal(t, http.StatusOK, fromHome(goodPassword))
		blocked(func() {
			require.Equal(t, http.StatusOK, fromHome(goodPassword), "the next right password marks the IP again")
		})

		_, err := e.app.Store().DeleteUser(context.Background(), first.ID, e.clock.Now())
		require.NoError(t, err)
		e.clock.Add(time.Second)
		e.addPasswordUser(addr, otherPassword, true)
		blocked(func() {
			require.Equal(t, http.StatusUnauthorized, fromHome(otherPassword), "the old user's IP is no known client of the new account")
		})
		require.NotContains(t, e.logs.String(), addr)
	})
}

// A device cookie's entry names the user who signed in, and exempts only
// while that user holds the address: after an e-mail change (which ends
// no database session) the old address's entry in the user's browser is
// no exemption for whoever signs the address up next.
func TestPasswordDeviceCookieStaysWithTheUser(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startPasswords(t, envOpts{postgres: pg, config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
		const addr = "ada@example.com"
		e.addPasswordUser(addr, goodPassword, true)
		ada := e.browser()
		require.Equal(t, http.StatusOK, e.passwordSignIn(ada, addr, goodPassword, "X-Forwarded-For", "198.51.100.1").StatusCode)
		device, ok := e.jarCookie(ada, passwordDeviceCookie)
		require.True(t, ok)

		res := e.changeEmail(ada, "ada.new@example.com")
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		e.addPasswordUser(addr, otherPassword, true) // someone else takes the old address

		e.spendAccountTier(addr, "203.0.113.7")
		require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(e.withDevice(device), addr, otherPassword, "X-Forwarded-For", "192.0.2.1").StatusCode,
			"the old holder's cookie is no exemption for the new account")
		require.Contains(t, e.logs.String(), "too many failed password sign-ins: account blocked")
	})
}
