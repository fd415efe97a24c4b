package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// passwords drives the account pages: on the main instance (no credentials
// provider: not supported), then on an instance of their own with a
// credentials provider, through every answer the document lists, the
// failures of a closed database last. Its checker's findings join a.v's.
func (a apiDriver) passwords() {
	style := func(c *config.Config) { c.Cookies.Style = a.e.cfg.Cookies.Style }
	off := startEnv(a.e.t, envOpts{ownURL: true, strategy: a.e.cfg.Session.Strategy, config: style})
	d := a.checkedOn(off)
	for _, p := range []string{"/signup", "/reset", "/account/password"} {
		require.Equal(a.e.t, http.StatusBadRequest, off.get(d.browser(), p).StatusCode, p)
	}
	pe := startPasswords(a.e.t, envOpts{
		strategy: a.e.cfg.Session.Strategy,
		email: func(p *config.Provider) {
			p.RateLimit.PerAddress, p.RateLimit.PerIP, p.RateLimit.PerNetwork, p.RateLimit.Global = 5, 1000, 1000, 1000
		},
		config: style,
	})
	a.checkedOn(pe).passwordPages()
}

// checkedOn is a driver for another instance whose checked answers count
// as a's.
func (a apiDriver) checkedOn(e *env) apiDriver {
	v := newAPIChecker(a.e.t, loadOpenAPI(a.e.t, []byte(e.get(e.browser(), "/openapi.json").body)), e.srv.URL)
	v.seen, v.statuses = a.v.seen, a.v.statuses
	return apiDriver{e: e, v: v}
}

func (a apiDriver) passwordPages() {
	e, t := a.e, a.e.t
	c := a.browser()
	stale := strings.Repeat("0", 64)
	huge := "csrfToken=" + strings.Repeat("a", 70<<10)
	for _, p := range []string{"/signup", "/signup/verify", "/reset", "/reset/confirm", "/account/password"} {
		e.csrf(c)
		res := e.do(c, a.request(http.MethodPost, p, "csrfToken=%zz", "application/x-www-form-urlencoded", invalidRequest))
		require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
		res = e.do(c, a.request(http.MethodPost, p, huge, "application/x-www-form-urlencoded"))
		require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, p)
	}

	// Sign-up: the pages, a CSRF retry, a bad address, a JSON body, the link.
	require.Equal(t, http.StatusOK, e.get(c, "/signup?csrf=true").StatusCode)
	require.Equal(t, http.StatusFound, e.post(c, "/signup", url.Values{"csrfToken": {stale}}).StatusCode)
	require.Equal(t, http.StatusBadRequest, e.form(c, "/signup", "email", "nope", "password", goodPassword).StatusCode)
	body := `{"csrfToken":"` + e.csrf(c) + `","email":"api@example.com","password":"` + goodPassword + `"}`
	require.Equal(t, http.StatusOK, e.do(c, a.request(http.MethodPost, "/signup", body, "application/json")).StatusCode)
	link, _ := e.flowLink(1, "/signup/verify")
	token := linkQuery(t, link).Get("token")
	require.Equal(t, http.StatusOK, e.get(c, link).StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(c, "/signup/verify?token=nope").StatusCode)
	require.Equal(t, http.StatusForbidden, e.post(c, "/signup/verify", url.Values{"csrfToken": {stale}, "token": {token}}).StatusCode)
	require.Equal(t, http.StatusBadRequest, e.form(c, "/signup/verify", "token", token, "password", otherPassword).StatusCode)
	require.Equal(t, http.StatusTooManyRequests, wrongUntilThrottled(func(guess string) int {
		return e.form(c, "/signup/verify", "token", token, "password", guess).StatusCode
	}))
	e.clock.Add(10 * time.Minute) // past the throttle's longest block
	require.Equal(t, http.StatusOK, e.form(c, "/signup/verify", "token", token, "password", goodPassword).StatusCode)
	// A pending sign-up of an address that got an account meanwhile: 409.
	require.Equal(t, http.StatusOK, e.form(c, "/signup", "email", "api2@example.com", "password", otherPassword).StatusCode)
	second, _ := e.flowLink(2, "/signup/verify")
	e.signInByLink(a.browser(), "api2@example.com")
	res := e.form(c, "/signup/verify", "token", linkQuery(t, second).Get("token"), "password", otherPassword)
	require.Equal(t, http.StatusConflict, res.StatusCode)

	// Reset: the pages, a CSRF retry, a bad address, the link, a weak and a good password.
	require.Equal(t, http.StatusOK, e.get(c, "/reset?csrf=true&email=api%40example.com").StatusCode)
	require.Equal(t, http.StatusFound, e.post(c, "/reset", url.Values{"csrfToken": {stale}}).StatusCode)
	require.Equal(t, http.StatusBadRequest, e.form(c, "/reset", "email", "").StatusCode)
	require.Equal(t, http.StatusOK, e.form(c, "/reset", "email", "api@example.com").StatusCode)
	link, _ = e.flowLink(4, "/reset/confirm")
	token = linkQuery(t, link).Get("token")
	require.Equal(t, http.StatusOK, e.get(c, link).StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(c, "/reset/confirm?token=nope").StatusCode)
	require.Equal(t, http.StatusForbidden, e.post(c, "/reset/confirm", url.Values{"csrfToken": {stale}, "token": {token}}).StatusCode)
	require.Equal(t, http.StatusBadRequest, e.form(c, "/reset/confirm", "token", token, "password", "password").StatusCode)
	require.Equal(t, http.StatusOK, e.form(c, "/reset/confirm", "token", token, "password", otherPassword).StatusCode)
	for range 5 {
		e.form(c, "/reset", "email", "limited@example.com")
	}
	require.Equal(t, http.StatusTooManyRequests, e.form(c, "/reset", "email", "limited@example.com").StatusCode)
	for range 5 {
		e.form(c, "/signup", "email", "limited2@example.com", "password", goodPassword)
	}
	require.Equal(t, http.StatusTooManyRequests, e.form(c, "/signup", "email", "limited2@example.com", "password", goodPassword).StatusCode)

	// The account page: signed out, then with a password (wrong current
	// passwords until throttled, a change from another browser), then
	// without one (a link by e-mail).
	require.Equal(t, http.StatusFound, e.get(c, "/account/password").StatusCode)
	require.Equal(t, http.StatusFound, e.form(c, "/account/password", "password", goodPassword).StatusCode)
	e.signInByLink(c, "api@example.com")
	require.Equal(t, http.StatusOK, e.get(c, "/account/password?csrf=true").StatusCode)
	require.Equal(t, http.StatusFound, e.post(c, "/account/password", url.Values{"csrfToken": {stale}}).StatusCode)
	require.Equal(t, http.StatusTooManyRequests, wrongUntilThrottled(func(guess string) int {
		return e.form(c, "/account/password", "currentPassword", guess, "password", goodPassword).StatusCode
	}))
	e.clock.Add(10 * time.Minute) // past the throttle's longest block
	other := a.browser()
	e.signInByLink(other, "api@example.com")
	res = e.form(other, "/account/password", "currentPassword", otherPassword, "password", goodPassword)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	noPassword := a.browser()
	e.signInByLink(noPassword, "link-only@example.com")
	require.Equal(t, http.StatusOK, e.form(noPassword, "/account/password").StatusCode)

	// The database gone: 503 pages, never a 500.
	signedIn := a.browser()
	e.signInByLink(signedIn, "late@example.com")
	tok, signedInTok := e.csrf(c), e.csrf(signedIn)
	require.NoError(t, e.app.Store().Close())
	for _, r := range []struct{ method, target string }{
		{http.MethodPost, "/signup"}, {http.MethodGet, "/signup/verify?token=x"}, {http.MethodPost, "/signup/verify"},
		{http.MethodPost, "/reset"}, {http.MethodGet, "/reset/confirm?token=x"}, {http.MethodPost, "/reset/confirm"},
		{http.MethodGet, "/account/password"}, {http.MethodPost, "/account/password"},
	} {
		form := url.Values{"csrfToken": {tok}, "email": {"gone@example.com"}, "password": {goodPassword}, "token": {"x"}}
		cl := c
		if strings.HasPrefix(r.target, "/account") {
			cl = signedIn
			form.Set("csrfToken", signedInTok)
		}
		var res resp
		if r.method == http.MethodGet {
			res = e.get(cl, r.target)
		} else {
			res = e.post(cl, r.target, form)
		}
		require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "%s %s: %s", r.method, r.target, res.body)
	}
}

// wrongUntilThrottled tries wrong passwords until the answer is no longer
// 400 (at most ten) and returns that answer's status.
func wrongUntilThrottled(try func(guess string) int) int {
	status := http.StatusBadRequest
	for i := 0; status == http.StatusBadRequest && i < 10; i++ {
		status = try("wrong guess " + string(rune('a'+i)))
	}
	return status
}

// hashingBusy drives the account pages of a's instance, whose password
// hasher never gets a slot (every slot taken): a new password is not
// refused, the page says "try again" with 429 and Retry-After, as the
// password sign-in's TryLater, and nothing is stored or spent.
func hashingBusy(a apiDriver) {
	e, t := a.e, a.e.t
	hash, err := cheapHasher(t).Hash(goodPassword) // the instance's hasher has no slot
	require.NoError(t, err)
	addr, now := "busy@example.com", e.now()
	u := &models.User{Email: &addr, EmailVerified: &now}
	require.NoError(t, e.app.Store().CreateUserWithPassword(context.Background(), u, hash))
	c := a.browser()
	res := e.form(c, "/signup", "email", "new@example.com", "password", goodPassword)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, res.body)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	n := e.mailCount()
	require.Equal(t, http.StatusOK, e.form(c, "/reset", "email", addr).StatusCode)
	link, _ := e.flowLink(n+1, "/reset/confirm")
	res = e.form(c, "/reset/confirm", "token", linkQuery(t, link).Get("token"), "password", otherPassword)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, res.body)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.True(t, e.passwordIs(u.ID, goodPassword), "the password is unchanged")
	require.Equal(t, http.StatusOK, e.get(c, link).StatusCode, "the link is not spent")
}
