package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// RetryAfter is the Retry-After (seconds) of every answer to a database
// outage: a planned switchover takes a few seconds and pg_auto_failover's
// detection of a lost primary about twenty (docs/high-availability.md), so
// a client that waits this long and asks again meets the new primary or
// waits once more, without hammering the instances meanwhile.
const RetryAfter = "5"

var retryAfterValue = HeaderValue(RetryAfter)

// IsUnavailable reports whether err says that no writable database
// answered: the server went away, was demoted, or no host accepted a
// read-write session (models/failover marks such errors; the kit may not
// import storage, so it asks for the mark's method, Unavailable).
//
// Such a failure is not the user's: it is answered "try again" (503),
// never as a sign-out, a wrong link or a 500.
func IsUnavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return err != nil && errors.As(err, &u) && u.Unavailable()
}

// SetRetryAfter adds Retry-After to an outage's answer.
func SetRetryAfter(c echo.Context) { c.Response().Header()["Retry-After"] = retryAfterValue }

// SendUnavailable answers a request that met a database outage, with its
// cause logged once: 503 with Retry-After and
//   - for the next-auth clients' fetches (v4's json=true, v5's
//     X-Auth-Return-Redirect) and JSON callers, {"error":"TryLater","url":...}
//     where url is the error page, which shows the sign-in page's "busy,
//     try again" message (a client that follows url lands there, in the
//     request's explicit language; one that reads the error finds TryLater);
//   - for pages and forms, the "try again later" page.
func (k *Kit) SendUnavailable(c echo.Context, rq *Request, cause error) error {
	k.log.Warn("database unavailable", "path", c.Request().URL.Path, "err", cause, "request_id", RequestID(c))
	SetRetryAfter(c)
	if (rq != nil && (rq.JSONMode || rq.ReturnHeader)) || wantsJSON(c) {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{
			"error": string(signin.CodeTryLater),
			"url":   k.WithLang(c, rq, k.ErrorURL(signin.CodeTryLater)),
		})
	}
	n := views.PasswordNotice{Heading: "TryLaterHeading", Lines: []string{"TryLater"}}
	n.Page = k.Page(c, rq, n.Heading)
	return Render(c, http.StatusServiceUnavailable, views.PasswordNoticePage(n))
}

// wantsJSON reports a request that asked for JSON rather than a page.
func wantsJSON(c echo.Context) bool {
	r := c.Request()
	return r.Header.Get(echo.HeaderContentType) == echo.MIMEApplicationJSON ||
		(r.Header.Get(echo.HeaderAccept) == echo.MIMEApplicationJSON)
}
