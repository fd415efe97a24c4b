package app_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// otherPassword is a second acceptable password (goodPassword is in
// credentials_test.go).
const otherPassword = "a different passphrase, also long"

// Sign-up: the form stores nothing but a pending sign-up and mails a link;
// the link's page spends nothing when opened; only the password chosen at
// sign-up finishes it; the user is then verified with that password and
// the link is spent.
func TestPasswordSignUpFlow(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			c := e.browser()
			page := e.get(c, "/signup")
			require.Equal(t, http.StatusOK, page.StatusCode)
			require.Contains(t, page.body, `action="`+e.base+`/signup"`)
			require.Contains(t, page.body, `type="password"`)

			res := e.form(c, "/signup", "email", " New@Example.com ", "password", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Contains(t, res.body, "Check your email")
			require.Zero(t, e.counts().Users, "no user before the address is confirmed")

			link, subject := e.flowLink(1, "/signup/verify")
			require.Contains(t, subject, "Confirm your account")
			m, _ := e.mail(1)
			require.Equal(t, []string{"new@example.com"}, m.To)
			require.NotContains(t, e.logs.String(), linkQuery(t, link).Get("token"), "tokens are never logged")

			// Opening the link (a mail scanner, or the person) spends nothing.
			for range 2 {
				res = e.get(e.browser(), link)
				require.Equal(t, http.StatusOK, res.StatusCode)
				require.Contains(t, res.body, "new@example.com")
			}
			token := linkQuery(t, link).Get("token")
			res = e.form(c, "/signup/verify", "token", token, "password", otherPassword)
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			require.Contains(t, res.body, "not the password you chose")
			require.Zero(t, e.counts().Users)

			res = e.form(c, "/signup/verify", "token", token, "password", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Contains(t, res.body, "Your account is ready")
			u, err := e.app.Store().UserByEmail(context.Background(), "new@example.com")
			require.NoError(t, err)
			require.NotNil(t, u.EmailVerified)
			require.True(t, e.passwordIs(u.ID, goodPassword))
			res = e.passwordSignIn(c, "new@example.com", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, "signs in with the password: %s", res.body)
			require.Equal(t, "new@example.com", userEmail(e.session(c)))

			// Replayed: the documented dead-link answer, nothing changes.
			res = e.form(c, "/signup/verify", "token", token, "password", goodPassword)
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			require.Contains(t, res.body, "invalid, expired or already used")
			require.EqualValues(t, 1, e.counts().Users)
			require.Equal(t, http.StatusBadRequest, e.get(c, link).StatusCode)
		})
	}
}

// Sign-up and reset requests answer the same bytes for an address with an
// account and one without; only the e-mail differs, and the existing
// account is not touched.
func TestPasswordRequestsDoNotRevealAccounts(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			known := e.signUpFor("known@example.com", goodPassword)
			n := e.mailCount()

			answer := func(page, addr string) (int, string, []string) {
				c := e.browser()
				res := e.form(c, page, "email", addr, "password", otherPassword)
				return res.StatusCode, res.body, res.Header.Values("Set-Cookie")
			}
			for _, page := range []string{"/signup", "/reset"} {
				s1, b1, c1 := answer(page, "known@example.com")
				s2, b2, c2 := answer(page, "unknown@example.com")
				require.Equal(t, http.StatusOK, s1, page)
				require.Equal(t, s1, s2, page)
				require.Equal(t, b1, b2, "%s: the same bytes for a known and an unknown address", page)
				require.Equal(t, len(c1), len(c2), page)
			}
			mails := e.smtp.Wait(t, n+4)[n:]
			subjects := []string{}
			for _, m := range mails {
				p, err := smtptest.Parse(m.Data)
				require.NoError(t, err)
				subjects = append(subjects, m.To[0]+": "+p.Subject)
			}
			host := strings.TrimPrefix(e.origin, "http://")
			require.ElementsMatch(t, []string{
				"known@example.com: You already have an account on " + host,
				"unknown@example.com: Confirm your account on " + host,
				"known@example.com: Choose a new password for " + host,
				"unknown@example.com: Password reset on " + host,
			}, subjects)
			require.True(t, e.passwordIs(known.ID, goodPassword), "the sign-up for a known address changed nothing")
		})
	}
}

// Sign-up does the same work for an address with an account and one
// without, so its answer's time tells them apart no more than its bytes:
// both store one pending sign-up (for the existing account an inert one,
// whose link is never sent) and mail one message; when delivery fails,
// both remove their row again and answer the same 503.
func TestPasswordSignUpSameWorkForEveryAddress(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			bounce := func(addr string) bool { return strings.HasPrefix(addr, "bounce-") }
			e := startPasswords(t, b.opts(envOpts{smtp: &smtptest.Options{RejectRcpt: bounce}}))
			// Verified holders: an unverified one gets the sign-up link (the
			// owner's proof wins).
			e.addVerifiedUser("", "known@example.com")
			e.addVerifiedUser("", "bounce-known@example.com")
			pending := func(addr string) int {
				rows, err := e.app.Store().VerificationTokensFor(context.Background(), "password-signup:"+addr)
				require.NoError(t, err)
				return len(rows)
			}
			answer := func(addr string) resp {
				return e.form(e.browser(), "/signup", "email", addr, "password", goodPassword)
			}

			n, tokens := e.mailCount(), e.tokens()
			known, unknown := answer("known@example.com"), answer("unknown@example.com")
			require.Equal(t, http.StatusOK, known.StatusCode, known.body)
			require.Equal(t, known.body, unknown.body)
			require.Equal(t, 1, pending("known@example.com"), "the existing account's sign-up stores a row too")
			require.Equal(t, 1, pending("unknown@example.com"))
			require.Equal(t, tokens+2, e.tokens())
			e.smtp.Wait(t, n+2)
			require.EqualValues(t, 2, e.counts().Users, "no user is made before confirmation")

			// The existing account's e-mail carries no sign-up link: its row
			// can never be completed.
			for _, m := range e.smtp.Mails()[n:] {
				p, err := smtptest.Parse(m.Data)
				require.NoError(t, err)
				if m.To[0] == "known@example.com" {
					require.NotContains(t, p.Text, "/signup/verify")
				}
			}

			known, unknown = answer("bounce-known@example.com"), answer("bounce-new@example.com")
			require.Equal(t, http.StatusServiceUnavailable, known.StatusCode, known.body)
			require.Equal(t, known.StatusCode, unknown.StatusCode)
			require.Equal(t, known.body, unknown.body)
			require.Zero(t, pending("bounce-known@example.com"))
			require.Zero(t, pending("bounce-new@example.com"))
		})
	}
}

// Account pre-hijacking: an attacker who signs up with a victim's address
// cannot get the victim to adopt the attacker's password (the link's page
// wants the password chosen at sign-up), does not block the victim's own
// sign-up, and once the victim has an account (here by magic link) the
// attacker's pending sign-up cannot attach a password to it.
func TestPasswordSignUpPreHijacking(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			attacker := e.browser()
			res := e.form(attacker, "/signup", "email", "victim@example.com", "password", otherPassword)
			require.Equal(t, http.StatusOK, res.StatusCode)
			attackerLink, _ := e.flowLink(1, "/signup/verify")
			attackerToken := linkQuery(t, attackerLink).Get("token")

			// The victim clicks the mail they did not ask for: the page wants a
			// password they do not know.
			victim := e.browser()
			res = e.get(victim, attackerLink)
			require.Contains(t, res.body, "If you did not sign up, close this page")
			res = e.form(victim, "/signup/verify", "token", attackerToken, "password", goodPassword)
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			require.Zero(t, e.counts().Users)

			// The victim signs in by magic link: an account without a password.
			e.signInByLink(victim, "victim@example.com")
			u, err := e.app.Store().UserByEmail(context.Background(), "victim@example.com")
			require.NoError(t, err)
			require.False(t, e.passwordIs(u.ID, otherPassword))

			// The attacker, even holding the link, cannot attach a password now.
			res = e.form(attacker, "/signup/verify", "token", attackerToken, "password", otherPassword)
			require.Equal(t, http.StatusConflict, res.StatusCode, res.body)
			require.False(t, e.passwordIs(u.ID, otherPassword))
			require.EqualValues(t, 1, e.counts().Users)
			addr, _ := e.sessionUser(victim)
			require.Equal(t, "victim@example.com", addr, "the victim's session is untouched")

			// Nor does a pending sign-up lock the owner out of signing up: the
			// owner's own sign-up completes and spends the attacker's.
			n := e.mailCount()
			require.Equal(t, http.StatusOK, e.form(attacker, "/signup", "email", "owner@example.com", "password", otherPassword).StatusCode)
			planted, _ := e.flowLink(n+1, "/signup/verify")
			owner := e.signUpFor("owner@example.com", goodPassword)
			require.True(t, e.passwordIs(owner.ID, goodPassword))
			res = e.form(attacker, "/signup/verify", "token", linkQuery(t, planted).Get("token"), "password", otherPassword)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "the planted sign-up is spent")
			require.True(t, e.passwordIs(owner.ID, goodPassword))
		})
	}
}

// A sign-up the SignIn hook would refuse (here callbacks.allowed_email_domains)
// is refused at once: no e-mail, nothing stored. A hook tightened while a
// link is pending refuses its confirmation too: no account, link unspent.
func TestPasswordSignUpAsksTheSignInHook(t *testing.T) {
	var closed atomic.Bool
	domains := config.Callbacks{AllowedEmailDomains: []string{"corp.example"}}
	allowed := signin.DefaultHooks(domains).SignIn
	hooks := &signin.Hooks{SignIn: func(ctx context.Context, in signin.SignInInput) (bool, string) {
		if closed.Load() {
			return false, ""
		}
		return allowed(ctx, in)
	}}
	e := startPasswords(t, envOpts{hooks: hooks, config: func(c *config.Config) { c.Callbacks = domains }})
	res := e.form(e.browser(), "/signup", "email", "someone@elsewhere.example", "password", goodPassword)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, res.body, "cannot be used to sign up here")
	require.Zero(t, e.tokens())
	res = e.form(e.browser(), "/signup", "email", "someone@corp.example", "password", goodPassword)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	link, subject := e.flowLink(1, "/signup/verify")
	require.Contains(t, subject, "Confirm your account")

	closed.Store(true)
	token := linkQuery(t, link).Get("token")
	res = e.form(e.browser(), "/signup/verify", "token", token, "password", goodPassword)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, res.body)
	require.Contains(t, res.body, "cannot be used to sign up here")
	require.Zero(t, e.counts().Users)
	closed.Store(false)
	res = e.form(e.browser(), "/signup/verify", "token", token, "password", goodPassword)
	require.Equal(t, http.StatusOK, res.StatusCode, "the link was not spent: %s", res.body)
}

// signup: false takes the sign-up pages away (not supported), keeps reset;
// without a credentials provider every account page is not supported.
func TestPasswordPagesOff(t *testing.T) {
	off := false
	e := startPasswords(t, envOpts{config: func(c *config.Config) {
		for i := range c.Providers {
			if c.Providers[i].Type == config.TypeCredentials {
				c.Providers[i].Signup = &off
			}
		}
	}})
	c := e.browser()
	for _, res := range []resp{e.get(c, "/signup"), e.form(c, "/signup", "email", "a@example.com", "password", goodPassword), e.get(c, "/signup/verify?token=x")} {
		require.Equal(t, http.StatusBadRequest, res.StatusCode)
		require.Contains(t, res.body, "is not supported")
	}
	require.Equal(t, http.StatusOK, e.get(c, "/reset").StatusCode)
	require.Zero(t, e.mailCount())

	plain := startMail(t, envOpts{})
	for _, p := range []string{"/signup", "/reset", "/account/password", "/reset/confirm?token=x"} {
		res := plain.get(plain.browser(), p)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
	}
}

// Without an e-mail provider there are no links to send: the sign-in page
// links to neither page, both are not supported, and the config says so.
func TestPasswordPagesNeedMail(t *testing.T) {
	noMail := func(c *config.Config) {
		c.Providers = []config.Provider{{ID: "credentials", Type: config.TypeCredentials}}
	}
	e := startPw(t, envOpts{config: noMail})
	c := e.browser()
	page := e.get(c, "/signin")
	require.Equal(t, http.StatusOK, page.StatusCode)
	require.Contains(t, page.body, `type="password"`)
	require.NotContains(t, page.body, "/signup")
	require.NotContains(t, page.body, "/reset")
	for _, p := range []string{"/signup", "/reset"} {
		require.Equal(t, http.StatusBadRequest, e.get(c, p).StatusCode, p)
	}

	cfg := testConfig(t)
	noMail(&cfg)
	warnings, err := cfg.Validate(app.CatalogueExtra)
	require.NoError(t, err)
	require.Contains(t, strings.Join(warnings, "\n"), "sign-up and password reset are off")
}
