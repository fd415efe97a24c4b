package nextauth

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// credentialsCallback is POST {base}/callback/{credentials} (the route has
// checked CSRF): the v4 client's signIn("credentials", {email, password})
// and the sign-in page's password form. The rules are in
// signin.SignInWithPassword; this is the wire: next-auth's answers, whose
// status depends on the outcome (credentialsRefused).
func (h *Handler) credentialsCallback(c echo.Context, rq *web.Request, p config.Provider) error {
	out, err := h.core.SignInWithPassword(c.Request().Context(), h.browser(c), h.credentials(p), signin.PasswordLogin{
		Email:    rq.Form.Get("email"),
		Password: rq.Form.Get("password"),
		ClientIP: c.RealIP(),
		Device:   h.kit.PasswordDevice(c),
	})
	if err != nil {
		return h.credentialsRefused(c, rq, p, err)
	}
	return h.kit.AfterSignIn(c, rq, out)
}

// credentialsRefused answers a refused password sign-in as next-auth v4's
// credentials callback (next-auth/core/routes/callback.js):
//
//	CredentialsSignin: 401 {url: {base}/error?error=CredentialsSignin&provider={id}} in
//	                   JSON mode, else a 302 there (GET /error bounces it to the sign-in
//	                   page); the v5 client (X-Auth-Return-Redirect) gets v5's 200
//	                   {url: {base}/signin?error=CredentialsSignin&code={id}}
//	                   (each with the request's explicit lang, when it has one)
//	AccessDenied:      403 {url: {base}/error?error=AccessDenied} in JSON mode
//	TryLater:          latchkey's own (every hashing slot taken, or the throttle's
//	                   counters out of reach in the database): as CredentialsSignin
//	                   with its own code, and 503 in JSON mode, so the client's
//	                   signIn() returns {error: "TryLater", status: 503}
//
// Anything else (the SignIn hook's redirect, a database failure) goes
// through fail like any other action. The cause is logged once, with the
// address masked, and the outcome counted (latchkey_signins_total).
func (h *Handler) credentialsRefused(c echo.Context, rq *web.Request, p config.Provider, err error) error {
	code := signin.CodeOf(err)
	var e *signin.Error
	status := map[signin.Code]int{
		signin.CodeCredentialsSignin: http.StatusUnauthorized,
		signin.CodeAccessDenied:      http.StatusForbidden,
		signin.CodeTryLater:          http.StatusServiceUnavailable,
	}[code]
	if !errors.As(err, &e) || e.Redirect != "" || status == 0 {
		return h.kit.Fail(c, rq, err)
	}
	cause := err.Error()
	if e.Cause != nil {
		cause = e.Cause.Error()
	}
	h.countFailedSignIn(c, code)
	logs.RequestFailed(h.log, slog.LevelWarn, err, "password sign-in refused", "provider", p.ID, "code", string(code), "cause", cause, "request_id", web.RequestID(c))
	if code == signin.CodeTryLater { // busy, or the throttle's counters out of reach: say when to ask again
		web.SetRetryAfter(c)
	}
	if code == signin.CodeAccessDenied {
		return h.kit.SendStatusRedirect(c, rq, status, h.kit.WithLang(c, rq, h.kit.ErrorURL(code)))
	}
	if rq.ReturnHeader && !rq.JSONMode {
		to := h.base.URL("/signin") + "?" + url.Values{"error": {string(code)}, "code": {p.ID}}.Encode()
		return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, to))
	}
	to := h.kit.WithLang(c, rq, h.kit.ErrorURL(code)+"&provider="+url.QueryEscape(p.ID))
	return h.kit.SendStatusRedirect(c, rq, status, to)
}
