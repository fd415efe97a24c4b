package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

var timeZero time.Time

// Redirect resolves a callbackUrl or redirect target through the
// operator's Redirect hook and then the redirect policy, which has the
// last word.
func (k *Kit) Redirect(target string) string {
	target = k.hook(target, k.policy.Origin())
	resolved, _ := k.policy.Resolve(target)
	return resolved
}

// SendRedirect answers a redirecting action: 302 by default, {"url"} with
// 200 in v4 JSON mode (json=true), and {"url"} plus Location for the v5
// client's X-Auth-Return-Redirect header.
func (k *Kit) SendRedirect(c echo.Context, rq *Request, to string) error {
	switch {
	case rq != nil && rq.JSONMode:
		return c.JSON(http.StatusOK, map[string]string{"url": to})
	case rq != nil && rq.ReturnHeader:
		c.Response().Header().Set(echo.HeaderLocation, to)
		return c.JSON(http.StatusOK, map[string]string{"url": to})
	default:
		return c.Redirect(http.StatusFound, to)
	}
}

// SendStatusRedirect is SendRedirect where v4's JSON mode carries the
// status of the outcome (401, 403) rather than 200, as the credentials
// callback's does.
func (k *Kit) SendStatusRedirect(c echo.Context, rq *Request, status int, to string) error {
	if rq.JSONMode {
		return c.JSON(status, map[string]string{"url": to})
	}
	return k.SendRedirect(c, rq, to)
}

// NoStore marks a response as private and uncacheable, as next-auth does
// for /csrf and /session: shared one-value slices (HeaderValue), since both
// routes answer on every page load.
func NoStore(c echo.Context) {
	h := c.Response().Header()
	h["Cache-Control"] = NoStoreCacheControl
	h["Pragma"] = noStorePragma
	h["Expires"] = noStoreExpires
}

var (
	noStorePragma  = HeaderValue("no-cache")
	noStoreExpires = HeaderValue("0")
)

// PlainJSON reports whether c.JSON would write compact JSON for c: with
// ?pretty in the query (or echo in debug mode) it indents its output, so
// those requests still go through it.
func PlainJSON(c echo.Context) bool {
	return c.Request().URL.RawQuery == "" && !c.Echo().Debug
}

// SendBuilt answers 200 with the JSON build appends to a pooled buffer:
// GET /session and GET /csrf answer on every page load, so their JSON is
// written by hand instead of going through c.JSON (reflection, an encoder
// and a header slice per response), with the bytes c.JSON writes.
func (k *Kit) SendBuilt(c echo.Context, build func([]byte) []byte) error {
	p := k.jsonBuffers.Get().(*[]byte)
	*p = build((*p)[:0])
	err := SendJSON(c, http.StatusOK, *p)
	if cap(*p) <= 4096 { // a huge session object is not kept
		k.jsonBuffers.Put(p)
	}
	return err
}

// RetryPage is the answer to a POST whose csrfToken did not match, on the
// sign-in, sign-out and account pages: back to page with ?csrf=true, as
// next-auth's, keeping the request's explicit language.
func (k *Kit) RetryPage(page string) Action {
	return func(c echo.Context, rq *Request) error {
		return k.SendRedirect(c, rq, k.WithLang(c, rq, k.base.URL(page)+"?csrf=true"))
	}
}
