package web

import (
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/views"
)

// Page is the layout data shared by every page, in the request's language
// (LangOf); title is a message id.
func (k *Kit) Page(c echo.Context, rq *Request, title string) views.Page {
	lang, explicit := k.LangOf(c, rq)
	return views.Page{Title: title, StaticURL: k.base.Path + "/static", Theme: k.theme, Lang: lang, LangParam: explicit}
}

// Render writes a templ component as HTML with the given status. No page
// may be stored by a cache: sign-in, sign-out and the e-mail confirm page
// embed the browser's CSRF token, and every page can set the CSRF and
// callback-url cookies, which a shared cache would hand to the next visitor
// along with the page. (The error and verify-request pages lose nothing by
// it: they are small and rarely visited twice.)
func Render(c echo.Context, status int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}

// WithQuery appends query parameters to a URL that may already have a query.
func WithQuery(u string, q url.Values) string {
	if len(q) == 0 {
		return u
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + q.Encode()
}

// HostOf is an origin's host[:port], as pages and e-mails name the service.
func HostOf(origin string) string {
	if u, err := url.Parse(origin); err == nil {
		return u.Host
	}
	return origin
}
