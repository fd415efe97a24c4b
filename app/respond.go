package app

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

var timeZero time.Time

// redirect resolves a callbackUrl or redirect target through the operator's
// Redirect hook and then the redirect policy, which has the last word.
func (a *App) redirect(target string) string {
	target = a.hooks.Redirect(target, a.policy.Origin())
	resolved, _ := a.policy.Resolve(target)
	return resolved
}

// sendRedirect answers a redirecting action: 302 by default, {"url"} with
// 200 in v4 JSON mode (json=true), and {"url"} plus Location for the v5
// client's X-Auth-Return-Redirect header.
func (a *App) sendRedirect(c echo.Context, rq *request, to string) error {
	switch {
	case rq != nil && rq.jsonMode:
		return c.JSON(http.StatusOK, map[string]string{"url": to})
	case rq != nil && rq.returnHeader:
		c.Response().Header().Set(echo.HeaderLocation, to)
		return c.JSON(http.StatusOK, map[string]string{"url": to})
	default:
		return c.Redirect(http.StatusFound, to)
	}
}

// noStore marks a response as private and uncacheable, as next-auth does
// for /csrf and /session: shared one-value slices under canonical keys, as
// securityHeaders does, since both routes answer on every page load.
func noStore(c echo.Context) {
	h := c.Response().Header()
	h["Cache-Control"] = web.NoStoreCacheControl
	h["Pragma"] = noStorePragma
	h["Expires"] = noStoreExpires
}

var (
	noStorePragma  = web.HeaderValue("no-cache")
	noStoreExpires = web.HeaderValue("0")
)
