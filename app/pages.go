package app

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// page is the layout data shared by every page, in the request's language
// (langOf); title is a message id.
func (a *App) page(c echo.Context, rq *request, title string) views.Page {
	lang, explicit := a.langOf(c, rq)
	return views.Page{Title: title, StaticURL: a.base.Path + "/static", Theme: a.theme.page, Lang: lang, LangParam: explicit}
}

// render writes a templ component as HTML with the given status. No page
// may be stored by a cache: sign-in, sign-out and the e-mail confirm page
// embed the browser's CSRF token, and every page can set the CSRF and
// callback-url cookies, which a shared cache would hand to the next visitor
// along with the page. (The error and verify-request pages lose nothing by
// it: they are small and rarely visited twice.)
func render(c echo.Context, status int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}

// withQuery appends query parameters to a URL that may already have a query.
func withQuery(u string, q url.Values) string {
	if len(q) == 0 {
		return u
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + q.Encode()
}

// getSignIn renders the sign-in page, or redirects to pages.sign_in.
func (a *App) getSignIn(c echo.Context, rq *request) error {
	code := signin.Code(c.QueryParam("error"))
	if a.cfg.Pages.SignIn != "" {
		q := url.Values{"callbackUrl": {rq.callbackURL}}
		if code != "" {
			q.Set("error", string(code))
		}
		return c.Redirect(http.StatusFound, withQuery(a.cfg.Pages.SignIn, q))
	}
	callback := c.QueryParam("callbackUrl")
	if callback == "" {
		callback = rq.callbackURL
	} else {
		callback = a.redirect(callback)
	}
	pg := a.page(c, rq, "TitleSignIn")
	if len(a.passkeys.rps) > 0 {
		pg.Script = a.base.Path + "/static/passkeys.js"
	}
	return render(c, http.StatusOK, views.SignInPage(views.SignIn{
		Passkeys:    len(a.passkeys.rps) > 0,
		Page:        pg,
		Providers:   a.providers.views,
		CSRFToken:   rq.csrfToken,
		CallbackURL: callback,
		Email:       c.QueryParam("email"),
		Error:       signinMessage(code),
	}))
}

// getSignOut renders the sign-out confirmation, or redirects to pages.sign_out.
func (a *App) getSignOut(c echo.Context, rq *request) error {
	if a.cfg.Pages.SignOut != "" {
		return c.Redirect(http.StatusFound, a.cfg.Pages.SignOut)
	}
	msg := ""
	if c.QueryParam("csrf") == "true" {
		msg = "SignOutExpired"
	}
	return render(c, http.StatusOK, views.SignOutPage(views.SignOut{
		Page:      a.page(c, rq, "TitleSignOut"),
		Action:    a.base.URL("/signout"),
		CSRFToken: rq.csrfToken,
		Error:     msg,
	}))
}

// getError shows the error page. Sign-in-class codes bounce to the sign-in
// page (as v4 does) so the message appears beside the sign-in options.
func (a *App) getError(c echo.Context, rq *request) error {
	code := signin.Code(c.QueryParam("error"))
	if signinErrors[code] {
		return c.Redirect(http.StatusFound, a.withLang(c, rq, a.base.URL("/signin")+"?error="+url.QueryEscape(string(code))))
	}
	if a.cfg.Pages.Error != "" {
		return c.Redirect(http.StatusFound, withQuery(a.cfg.Pages.Error, url.Values{"error": {string(code)}}))
	}
	ep := errorPageFor(code)
	d := views.Error{
		Page:     a.page(c, rq, "TitleError"),
		Heading:  ep.heading,
		Lines:    ep.lines,
		HomeURL:  a.policy.Origin(),
		HomeHost: hostOf(a.base.Origin),
	}
	if ep.signIn {
		d.SignInURL = a.base.URL("/signin")
	}
	return render(c, ep.status, views.ErrorPage(d))
}

// getVerifyRequest shows "check your email", or redirects to pages.verify_request.
func (a *App) getVerifyRequest(c echo.Context, rq *request) error {
	if a.cfg.Pages.VerifyRequest != "" {
		return c.Redirect(http.StatusFound, a.cfg.Pages.VerifyRequest)
	}
	return render(c, http.StatusOK, views.VerifyRequestPage(views.VerifyRequest{
		Page:     a.page(c, rq, "TitleVerifyRequest"),
		HomeURL:  a.policy.Origin(),
		HomeHost: hostOf(a.base.Origin),
	}))
}

func hostOf(origin string) string {
	if u, err := url.Parse(origin); err == nil {
		return u.Host
	}
	return origin
}
