package web

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// Error is every handler's failure, whatever the route, in one of three
// shapes, and the cause to log (once, here; never shown):
//   - a NextAuth error code (the core's *signin.Error is read as one):
//     the error page's redirect, {base}/error?error=Code, or {url} in JSON
//     mode, or the SignIn hook's own redirect;
//   - a page notice (the account pages): the notice page with Status;
//   - a JSON body (Auth.js's webauthn-options errors): Body with Status.
type Error struct {
	Code     signin.Code
	Redirect string // the SignIn hook's target, instead of the error page

	Notice *views.PasswordNotice // the notice page to render

	Body any // a JSON answer's body

	Status int
	Cause  error
	// What names the step that failed, in the log line.
	What string
}

func (e *Error) Error() string {
	switch {
	case e.Cause != nil:
		return e.What + ": " + e.Cause.Error()
	case e.Code != "":
		return string(e.Code)
	}
	return e.What
}

func (e *Error) Unwrap() error { return e.Cause }

// Notice is a failure answered with a notice page (heading and lines are
// message ids) and status; cause, when not nil, is logged with what.
func Notice(status int, n views.PasswordNotice, what string, cause error) *Error {
	return &Error{Notice: &n, Status: status, What: what, Cause: cause}
}

// TryLater is the notice page of a database or mail server that failed
// (503): the cause is logged with what, the page says to try again later.
func TryLater(what string, cause error) *Error {
	return Notice(http.StatusServiceUnavailable, views.PasswordNotice{Heading: "TryLaterHeading", Lines: []string{"TryLater"}}, what, cause)
}

// JSONError is a failure answered with a JSON body and status.
func JSONError(status int, body any, what string, cause error) *Error {
	return &Error{Body: body, Status: status, What: what, Cause: cause}
}

// ErrorURL is where a failed action sends the browser: {base}/error?error=code.
func (k *Kit) ErrorURL(code signin.Code) string {
	return k.base.URL("/error") + "?error=" + url.QueryEscape(string(code))
}

// answer sends a handler's failure through Fail; errors of neither shape
// (echo's HTTP errors: 400, 404, 413) go on to echo's error handler.
func (k *Kit) answer(c echo.Context, rq *Request, err error) error {
	if err == nil {
		return nil // before errors.As, whose target would escape on every request
	}
	var se *signin.Error
	var we *Error
	if errors.As(err, &se) || errors.As(err, &we) || IsUnavailable(err) {
		return k.Fail(c, rq, err)
	}
	return err
}

// Fail is the one place a failed action becomes an answer (Error's doc
// says which; a database outage is SendUnavailable's), with its cause
// logged once.
func (k *Kit) Fail(c echo.Context, rq *Request, err error) error {
	if IsUnavailable(err) { // whatever shape the handler gave it
		return k.SendUnavailable(c, rq, err)
	}
	var we *Error
	if errors.As(err, &we) {
		switch {
		case we.Notice != nil:
			k.logCause(c, we)
			n := *we.Notice
			if n.Page.Title == "" {
				n.Page = k.Page(c, rq, n.Heading)
			}
			return Render(c, we.Status, views.PasswordNoticePage(n))
		case we.Body != nil:
			k.logCause(c, we)
			return c.JSON(we.Status, we.Body)
		}
	}
	code := signin.CodeOf(err)
	if we != nil && we.Code != "" {
		code = we.Code
	}
	if k.onFailure != nil {
		k.onFailure(c, code)
	}
	var se *signin.Error
	redirect := ""
	if errors.As(err, &se) {
		redirect = se.Redirect
	} else if we != nil {
		redirect = we.Redirect
	}
	if redirect != "" {
		return k.SendRedirect(c, rq, k.Redirect(redirect))
	}
	cause := err
	if se != nil && se.Cause != nil {
		cause = se.Cause
	} else if we != nil && we.Cause != nil {
		cause = we.Cause
	}
	logs.RequestFailed(k.log, slog.LevelWarn, cause, "request failed", "path", c.Request().URL.Path, "code", string(code), "cause", cause.Error(), "request_id", RequestID(c))
	return k.SendRedirect(c, rq, k.WithLang(c, rq, k.ErrorURL(code)))
}

// logCause logs a page or JSON failure's cause once (nothing when it has
// none). A 4xx with a cause (a dead link: an unknown or replayed
// authorization request, a forged logout request) is a refusal, an answer
// and not an incident: it is a warning, as Fail writes the NextAuth
// codes' refusals, so anyone who can send a request cannot fill the error
// log; the 5xx (a database or mail server that failed) are errors.
func (k *Kit) logCause(c echo.Context, e *Error) {
	if e.Cause == nil {
		return
	}
	level := slog.LevelError
	if e.Status >= 400 && e.Status < 500 {
		level = slog.LevelWarn
	}
	logs.RequestFailed(k.log, level, e.Cause, "request failed", "path", c.Request().URL.Path, "step", e.What, "err", e.Cause, "request_id", RequestID(c))
}

// NotSupported is the answer to a route that is off (a page whose flow the
// config does not offer) or a provider a route does not serve: the answer
// to an unknown action, next-auth's 400 "This action with HTTP … is not
// supported by NextAuth.js" (the app's routing-miss handler writes it).
var NotSupported = echo.ErrNotFound
