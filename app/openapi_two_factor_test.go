package app_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// With two_factor.mode on, the document lists the two-factor routes (and
// only then: they are mounted only then), each registered route is
// documented and each documented one registered; a literal path such as
// /callback/two-factor counts as registered through /callback/:provider.
func TestOpenAPIDocumentsTwoFactorRoutes(t *testing.T) {
	e := startTwoFactor(t, backends()[0], nil)
	doc := loadOpenAPI(t, []byte(e.get(e.browser(), "/openapi.json").body))
	baseOps, _ := operations(doc)
	var registered []*regexp.Regexp
	for _, r := range app.RegisteredRoutes(e.app) {
		if r.Method == echo.RouteNotFound || !openAPIMethod[r.Method] {
			continue
		}
		p, ok := strings.CutPrefix(r.Path, e.path)
		if !ok {
			continue
		}
		op := templated(r.Method + " " + p)
		found := false
		for _, d := range baseOps {
			found = found || templated(d) == op
		}
		require.True(t, found, "route %s %s is not in app/openapi/openapi.yaml", r.Method, r.Path)
		registered = append(registered, regexp.MustCompile("^"+strings.ReplaceAll(regexp.QuoteMeta(op), "\\{\\}", "[^/]+")+"$"))
	}
	for _, d := range baseOps {
		ok := false
		for _, r := range registered {
			ok = ok || r.MatchString(templated(d)) || r.MatchString(d)
		}
		require.True(t, ok, "%s is documented but not registered", d)
	}
	for _, op := range twoFactorOps(doc) {
		require.Contains(t, baseOps, op)
	}
	require.Len(t, twoFactorOps(doc), 7)

	off := startEnv(t, envOpts{ownURL: true})
	require.Empty(t, twoFactorOps(loadOpenAPI(t, []byte(off.get(off.browser(), "/openapi.json").body))), "two-factor off: not served, not documented")
}

// twoFactorOps are the document's operations of the two-factor feature.
func twoFactorOps(doc *openapi3.T) []string {
	var ops []string
	for p, item := range doc.Paths.Map() {
		if item.Extensions["x-latchkey-feature"] != "two-factor" {
			continue
		}
		for method := range item.Operations() {
			ops = append(ops, method+" "+p)
		}
	}
	return ops
}

// twoFactor drives the two-factor routes on an instance of their own
// (two_factor.mode optional, a credentials provider) through every answer
// the document lists for them, the held first factor included, the
// failures of a closed database last. Its checker's findings join a.v's.
// TestOpenAPIMatchesRealResponses runs it in each session strategy and
// cookie style.
func (a apiDriver) twoFactor() {
	style := func(c *config.Config) { c.Cookies.Style = a.e.cfg.Cookies.Style }
	te := startTwoFactor(a.e.t, backend{name: a.e.cfg.Session.Strategy, strategy: a.e.cfg.Session.Strategy}, style)
	d := a.checkedOn(te)
	d.twoFactorAnswers()
	d.v.requireCovered(a.e.t, twoFactorOps(d.v.doc))
}

func (a apiDriver) twoFactorAnswers() {
	e, t := a.e, a.e.t
	stale := strings.Repeat("0", 64)
	huge := "csrfToken=" + strings.Repeat("a", 70<<10)
	form := func(c *http.Client, p string, fields ...string) resp { return e.form(c, p, fields...) }

	// A user with two-factor (Ada) and one without (Bob), both signed in
	// with their password.
	e.addPasswordUser("ada@example.com", goodPassword, true)
	e.addPasswordUser("bob@example.com", goodPassword, true)
	owner, bob := a.browser(), a.browser()
	require.Equal(t, http.StatusOK, e.passwordSignIn(owner, "ada@example.com", goodPassword).StatusCode)
	require.Equal(t, http.StatusOK, e.passwordSignIn(bob, "bob@example.com", goodPassword).StatusCode)

	// The account page: signed out, the setup, a refused code, the settings.
	require.Equal(t, http.StatusFound, e.get(a.browser(), "/account/two-factor").StatusCode)
	require.Equal(t, http.StatusUnauthorized, e.get(bob, "/account/two-factor?error=TwoFactorInvalid").StatusCode)
	res := form(bob, "/account/two-factor/enable", "code", "000000")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "error=TwoFactorInvalid")
	secret, _ := e.enrol(owner)
	require.Equal(t, http.StatusOK, e.get(owner, "/account/two-factor").StatusCode)
	res = form(owner, "/account/two-factor/recovery-codes")
	require.Equal(t, http.StatusFound, res.StatusCode, "a session without the second factor steps up first")
	// So do the account page's changes that could hand the account over:
	// JSON gets 403 SessionRequired with the step-up form in url.
	res = e.apiPost(owner, "/unlink-account", "id", "x")
	require.Equal(t, http.StatusForbidden, res.StatusCode, res.body)
	require.Contains(t, res.json(t)["url"], "/two-factor?callbackUrl=")
	require.Equal(t, http.StatusFound, form(owner, "/delete-user", "confirm", "ada@example.com").StatusCode)
	require.Equal(t, http.StatusOK, e.get(owner, "/two-factor").StatusCode, "the step-up form")
	require.Equal(t, http.StatusFound, form(owner, "/callback/two-factor", "code", e.code(secret)).StatusCode, "the step-up")
	e.nextStep()
	res = form(owner, "/account/two-factor/recovery-codes")
	require.Equal(t, http.StatusOK, res.StatusCode)
	codes := recoveryCode.FindAllString(res.body, -1) // the old set is void
	require.Len(t, codes, 10)
	require.Equal(t, http.StatusFound, form(bob, "/account/two-factor/recovery-codes").StatusCode, "not on: back to the page")
	require.Equal(t, http.StatusFound, form(a.browser(), "/account/two-factor/disable", "code", "000000").StatusCode, "signed out: to sign in")
	require.Equal(t, http.StatusFound, e.post(owner, "/account/two-factor/enable", url.Values{"csrfToken": {stale}}).StatusCode)
	for _, p := range []string{"/account/two-factor/enable", "/account/two-factor/recovery-codes", "/account/two-factor/disable", "/callback/two-factor"} {
		e.csrf(owner)
		res := e.do(owner, a.request(http.MethodPost, p, "csrfToken=%zz", "application/x-www-form-urlencoded", invalidRequest))
		require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
		res = e.do(owner, a.request(http.MethodPost, p, huge, "application/x-www-form-urlencoded"))
		require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, p)
	}

	// The held first factor, the page, the provider's callback fetched.
	c := a.browser()
	res = e.passwordSignIn(c, "ada@example.com", goodPassword)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
	require.Contains(t, res.json(t)["url"], "error=TwoFactorRequired")
	require.Equal(t, http.StatusOK, e.get(c, "/two-factor").StatusCode)
	require.Equal(t, http.StatusUnauthorized, e.get(c, "/two-factor?error=TwoFactorInvalid").StatusCode)
	require.Equal(t, http.StatusFound, e.get(c, "/callback/two-factor").StatusCode)
	res = e.do(c, withHeader(a.request(http.MethodGet, "/callback/two-factor", "", ""), "X-Auth-Return-Redirect", "1"))
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, http.StatusFound, e.get(a.browser(), "/two-factor").StatusCode, "neither a step nor a session: start over")
	require.Equal(t, http.StatusFound, e.get(bob, "/two-factor").StatusCode, "no two-factor: to the setup")
	require.Equal(t, http.StatusFound, e.get(owner, "/two-factor").StatusCode, "stepped up already: on to callbackUrl")

	// Refusals: JSON (v4), a form (302), X-Auth-Return-Redirect (v5), a
	// csrfToken mismatch, no pending step.
	e.requireCodeRefused(e.postCode(c, "000000"), http.StatusUnauthorized, "TwoFactorInvalid")
	require.Equal(t, http.StatusFound, e.post(c, "/callback/two-factor", url.Values{"csrfToken": {e.csrf(c)}, "code": {"000000"}}).StatusCode)
	res = e.post(c, "/callback/two-factor", url.Values{"csrfToken": {e.csrf(c)}, "code": {"000000"}}, "X-Auth-Return-Redirect", "1")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.json(t)["url"], "code=two-factor")
	require.Equal(t, http.StatusFound, e.post(c, "/callback/two-factor", url.Values{"csrfToken": {stale}, "code": {"000000"}}).StatusCode)
	e.requireCodeRefused(e.postCode(a.browser(), "000000"), http.StatusUnauthorized, "TwoFactorExpired")

	// Success: JSON with a remembered browser; a form's 302 with a recovery code.
	res = e.postCode(c, e.code(secret), "remember", "on")
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	e.nextStep()
	f := a.browser()
	require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(f, "ada@example.com", goodPassword).StatusCode)
	res = e.post(f, "/callback/two-factor", url.Values{"csrfToken": {e.csrf(f)}, "code": {codes[9]}, "callbackUrl": {e.origin + "/home"}})
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.origin+"/home", res.location())

	// Throttled: five wrong codes in a row, then any code waits (429).
	w := a.browser()
	require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(w, "ada@example.com", goodPassword).StatusCode)
	for range 5 {
		e.requireCodeRefused(e.postCode(w, "999999"), http.StatusUnauthorized, "TwoFactorInvalid")
	}
	x := a.browser()
	require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(x, "ada@example.com", goodPassword).StatusCode)
	e.requireCodeRefused(e.postCode(x, e.code(secret)), http.StatusTooManyRequests, "TwoFactorThrottled")
	e.clock.Add(time.Minute)

	// Turning it off: a wrong code, then a right one (c signed in just now).
	res = form(c, "/account/two-factor/disable", "code", "000000")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "error=TwoFactorInvalid")
	e.clock.Add(2 * time.Minute) // the sixth wrong code in a row doubled the backoff
	res = form(c, "/account/two-factor/disable", "code", e.code(secret))
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "notice=disabled")

	// The database gone: 503 pages, never a 500.
	held := a.browser()
	e.addPasswordUser("cy@example.com", goodPassword, true)
	require.Equal(t, http.StatusOK, e.passwordSignIn(held, "cy@example.com", goodPassword).StatusCode)
	require.NoError(t, e.app.Store().Close())
	require.Equal(t, http.StatusServiceUnavailable, e.get(x, "/two-factor").StatusCode)
	require.Equal(t, http.StatusServiceUnavailable, e.get(held, "/account/two-factor").StatusCode)
}
