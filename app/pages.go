package app

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// getSignIn renders the sign-in page, or redirects to pages.sign_in.
func (a *App) getSignIn(c echo.Context, rq *web.Request) error {
	code := signin.Code(c.QueryParam("error"))
	if a.cfg.Pages.SignIn != "" {
		q := url.Values{"callbackUrl": {rq.CallbackURL}}
		if code != "" {
			q.Set("error", string(code))
		}
		return c.Redirect(http.StatusFound, web.WithQuery(a.cfg.Pages.SignIn, q))
	}
	callback := c.QueryParam("callbackUrl")
	if callback == "" {
		callback = rq.CallbackURL
	} else {
		callback = a.kit.Redirect(callback)
	}
	pg := a.kit.Page(c, rq, "TitleSignIn")
	if a.passkeys.Offered() {
		pg.Script = a.base.Path + "/static/passkeys.js"
	}
	return web.Render(c, http.StatusOK, views.SignInPage(views.SignIn{
		Passkeys:    a.passkeys.Offered(),
		Page:        pg,
		Providers:   a.providers.views,
		CSRFToken:   rq.CSRFToken,
		CallbackURL: callback,
		Email:       c.QueryParam("email"),
		Error:       signinMessage(code),
	}))
}

// getSignOut renders the sign-out confirmation, or redirects to pages.sign_out.
func (a *App) getSignOut(c echo.Context, rq *web.Request) error {
	if a.cfg.Pages.SignOut != "" {
		return c.Redirect(http.StatusFound, a.cfg.Pages.SignOut)
	}
	msg := ""
	if c.QueryParam("csrf") == "true" {
		msg = "SignOutExpired"
	}
	return web.Render(c, http.StatusOK, views.SignOutPage(views.SignOut{
		Page:      a.kit.Page(c, rq, "TitleSignOut"),
		Action:    a.base.URL("/signout"),
		CSRFToken: rq.CSRFToken,
		Error:     msg,
	}))
}

// getError shows the error page. Sign-in-class codes bounce to the sign-in
// page (as v4 does) so the message appears beside the sign-in options.
func (a *App) getError(c echo.Context, rq *web.Request) error {
	code := signin.Code(c.QueryParam("error"))
	if signinErrors[code] {
		return c.Redirect(http.StatusFound, a.kit.WithLang(c, rq, a.base.URL("/signin")+"?error="+url.QueryEscape(string(code))))
	}
	if a.cfg.Pages.Error != "" {
		return c.Redirect(http.StatusFound, web.WithQuery(a.cfg.Pages.Error, url.Values{"error": {string(code)}}))
	}
	ep := errorPageFor(code)
	d := views.Error{
		Page:     a.kit.Page(c, rq, "TitleError"),
		Heading:  ep.heading,
		Lines:    ep.lines,
		HomeURL:  a.kit.Origin(),
		HomeHost: web.HostOf(a.base.Origin),
	}
	if ep.signIn {
		d.SignInURL = a.base.URL("/signin")
	}
	return web.Render(c, ep.status, views.ErrorPage(d))
}

// getVerifyRequest shows "check your email", or redirects to pages.verify_request.
func (a *App) getVerifyRequest(c echo.Context, rq *web.Request) error {
	if a.cfg.Pages.VerifyRequest != "" {
		return c.Redirect(http.StatusFound, a.cfg.Pages.VerifyRequest)
	}
	return web.Render(c, http.StatusOK, views.VerifyRequestPage(views.VerifyRequest{
		Page:     a.kit.Page(c, rq, "TitleVerifyRequest"),
		HomeURL:  a.kit.Origin(),
		HomeHost: web.HostOf(a.base.Origin),
	}))
}
