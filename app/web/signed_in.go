package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// AfterSignIn answers a sign-in the core completed, whichever flow: a new
// CSRF token (it retires OAuth states derived from the old one, which may
// sit in IdP logs or browser history), then the callback URL, or first
// pages.new_user for a new user, as next-auth does. A sign-in the
// second-factor gate held goes to the second step instead (heldForSecondStep).
// A right password gets the password device cookie either way.
func (k *Kit) AfterSignIn(c echo.Context, rq *Request, in *signin.SignedIn) error {
	k.SetPasswordDevice(c, in.PasswordDevice, in.PasswordDeviceExpires) // a right password, with or without a second step to come
	if in.SecondStep != nil {
		return k.heldForSecondStep(c, rq, in)
	}
	k.SessionStarted(c, in)
	to := rq.CallbackURL
	if in.IsNew && k.newUser != "" {
		to = k.Redirect(WithQuery(k.newUser, url.Values{"callbackUrl": {rq.CallbackURL}}))
	}
	return k.SendRedirect(c, rq, to)
}

// SessionStarted is what every started session's answer carries, whatever
// it shows next: a new CSRF token, the remembered-device cookie when one
// was asked for, the spent second-step cookie cleared; and the log line
// and the metric.
func (k *Kit) SessionStarted(c echo.Context, in *signin.SignedIn) {
	k.IssueCSRF(c.Response())
	k.log.Info("signed in", "provider", in.Provider, "user", in.User.ID, "new", in.IsNew, "request_id", RequestID(c))
	if k.onSignIn != nil {
		k.onSignIn(in.Provider)
	}
	if in.Device != "" {
		k.baseCookies().Set(c.Response(), k.names.Device, in.Device, in.DeviceExpires, 0)
	}
	k.ClearSecondStep(c) // a finished or stale second step
}

// heldForSecondStep gives the browser its pending second step (a sealed
// cookie) and sends it to the second-step page, or to the enrolment page
// when the policy requires two-factor and the user has none. No session
// exists yet. The next-auth client's redirect:false gets the answer of a
// refused credentials sign-in with latchkey's own code, so signIn()
// resolves with {error: "TwoFactorRequired", ok: false} (v4: 401; v5's
// X-Auth-Return-Redirect: 200 with &code=two-factor, as v5 answers
// CredentialsSignin).
func (k *Kit) heldForSecondStep(c echo.Context, rq *Request, in *signin.SignedIn) error {
	held := in.SecondStep
	k.baseCookies().Set(c.Response(), k.names.SecondStep, held.Cookie, held.Expires, 0)
	page, code := "/two-factor", signin.CodeTwoFactorRequired
	if held.Enrol {
		page, code = "/account/two-factor", signin.CodeTwoFactorSetupRequired
	}
	k.log.Info("first factor passed: second step pending", "provider", in.Provider, "user", in.User.ID, "enrol", held.Enrol, "request_id", RequestID(c))
	q := url.Values{"callbackUrl": {rq.CallbackURL}}
	if rq.JSONMode || rq.ReturnHeader {
		q.Set("error", string(code))
	}
	if rq.ReturnHeader && !rq.JSONMode {
		q.Set("code", config.TwoFactorProviderID)
	}
	return k.SendStatusRedirect(c, rq, http.StatusUnauthorized, k.WithLang(c, rq, k.base.URL(page)+"?"+q.Encode()))
}

// SecondStep is the request's pending second-step cookie ("" when none).
func (k *Kit) SecondStep(c echo.Context) string {
	v, _ := cookies.Read(c.Request(), k.names.SecondStep)
	return v
}

// ClearSecondStep removes the browser's pending second-step cookie, if it
// sent one.
func (k *Kit) ClearSecondStep(c echo.Context) {
	if _, err := c.Cookie(k.names.SecondStep); err == nil {
		k.baseCookies().Clear(c.Response(), k.names.SecondStep)
	}
}

// SetPasswordDevice gives the browser the password device cookie value,
// sealed by the throttle after a right password, until expires; "" sets
// nothing.
func (k *Kit) SetPasswordDevice(c echo.Context, value string, expires time.Time) {
	if value != "" {
		k.baseCookies().Set(c.Response(), k.names.PasswordDevice, value, expires, 0)
	}
}

// PasswordDevice is the request's password device cookie ("" none), for
// signin.PasswordLogin and the account pages' password checks.
func (k *Kit) PasswordDevice(c echo.Context) string {
	v, _ := cookies.Read(c.Request(), k.names.PasswordDevice)
	return v
}

// baseCookies writes latchkey's own cookies that only its routes read
// (the second step, the remembered devices): narrowed to the base path and
// host-only.
func (k *Kit) baseCookies() cookies.Writer {
	w := k.cookies
	w.Path, w.Domain = k.base.Path, ""
	return w
}
