package app

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// credentialsCallback is POST {base}/callback/{credentials} (the route has
// checked CSRF): the v4 client's signIn("credentials", {email, password})
// and the sign-in page's password form. The rules are in
// signin.SignInWithPassword; this is the wire: next-auth's answers, whose
// status depends on the outcome (credentialsRefused).
func (a *App) credentialsCallback(c echo.Context, rq *web.Request, p config.Provider) error {
	out, err := a.core.SignInWithPassword(c.Request().Context(), a.browser(c), a.credentialsProvider(p), signin.PasswordLogin{
		Email:    rq.Form.Get("email"),
		Password: rq.Form.Get("password"),
		ClientIP: c.RealIP(),
	})
	if err != nil {
		return a.credentialsRefused(c, rq, p, err)
	}
	return a.kit.AfterSignIn(c, rq, out)
}

// credentialsProvider is what the rules need of p. It shares the
// instance's hasher (a.hasher: its bound on concurrent hashes must
// cover every check); the throttle's counters are in the database, so the
// rest is made per sign-in.
func (a *App) credentialsProvider(p config.Provider) signin.CredentialsProvider {
	return signin.CredentialsProvider{
		ID:        p.ID,
		Hasher:    a.hasher,
		Passwords: a.store,
		Throttle:  signin.NewThrottle(a.store),
	}
}

// credentialsRefused answers a refused password sign-in as next-auth v4's
// credentials callback (next-auth/core/routes/callback.js):
//
//	CredentialsSignin: 401 {url: {base}/error?error=CredentialsSignin&provider={id}} in
//	                   JSON mode, else a 302 there (GET /error bounces it to the sign-in
//	                   page); the v5 client (X-Auth-Return-Redirect) gets v5's 200
//	                   {url: {base}/signin?error=CredentialsSignin&code={id}}
//	AccessDenied:      403 {url: {base}/error?error=AccessDenied} in JSON mode
//	TryLater:          latchkey's own (every hashing slot taken): as CredentialsSignin
//	                   with its own code, and 503 in JSON mode, so the client's
//	                   signIn() returns {error: "TryLater", status: 503}
//
// Anything else (the SignIn hook's redirect, a database failure) goes
// through fail like any other action. The cause is logged once, with the
// address masked, and the outcome counted (latchkey_signins_total).
func (a *App) credentialsRefused(c echo.Context, rq *web.Request, p config.Provider, err error) error {
	code := signin.CodeOf(err)
	var e *signin.Error
	status := map[signin.Code]int{
		signin.CodeCredentialsSignin: http.StatusUnauthorized,
		signin.CodeAccessDenied:      http.StatusForbidden,
		signin.CodeTryLater:          http.StatusServiceUnavailable,
	}[code]
	if !errors.As(err, &e) || e.Redirect != "" || status == 0 {
		return a.kit.Fail(c, rq, err)
	}
	cause := err.Error()
	if e.Cause != nil {
		cause = e.Cause.Error()
	}
	a.countFailedSignIn(c, code)
	a.log.Warn("password sign-in refused", "provider", p.ID, "code", string(code), "cause", cause, "request_id", web.RequestID(c))
	if code == signin.CodeAccessDenied {
		return a.kit.SendStatusRedirect(c, rq, status, a.kit.ErrorURL(code))
	}
	if rq.ReturnHeader && !rq.JSONMode {
		to := a.base.URL("/signin") + "?" + url.Values{"error": {string(code)}, "code": {p.ID}}.Encode()
		return a.kit.SendRedirect(c, rq, to)
	}
	to := a.kit.WithLang(c, rq, a.kit.ErrorURL(code)+"&provider="+url.QueryEscape(p.ID))
	return a.kit.SendStatusRedirect(c, rq, status, to)
}
