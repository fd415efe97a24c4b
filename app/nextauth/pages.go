package nextauth

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// getSignIn renders the sign-in page, or redirects to pages.sign_in.
func (h *Handler) getSignIn(c echo.Context, rq *web.Request) error {
	code := signin.Code(c.QueryParam("error"))
	if h.pages.SignIn != "" {
		q := url.Values{"callbackUrl": {rq.CallbackURL}}
		if code != "" {
			q.Set("error", string(code))
		}
		return c.Redirect(http.StatusFound, web.WithQuery(h.pages.SignIn, q))
	}
	callback := c.QueryParam("callbackUrl")
	if callback == "" {
		callback = rq.CallbackURL
	} else {
		callback = h.kit.Redirect(callback)
	}
	pg := h.kit.Page(c, rq, "TitleSignIn")
	if h.passkeys {
		pg.Script = h.base.Path + "/static/passkeys.js"
	}
	return web.Render(c, http.StatusOK, views.SignInPage(views.SignIn{
		Passkeys:    h.passkeys,
		Page:        pg,
		Providers:   h.providers.views,
		CSRFToken:   rq.CSRFToken,
		CallbackURL: callback,
		Email:       c.QueryParam("email"),
		Error:       signinMessage(code),
	}))
}

// getSignOut renders the sign-out confirmation, or redirects to pages.sign_out.
func (h *Handler) getSignOut(c echo.Context, rq *web.Request) error {
	if h.pages.SignOut != "" {
		return c.Redirect(http.StatusFound, h.pages.SignOut)
	}
	msg := ""
	if c.QueryParam("csrf") == "true" {
		msg = "SignOutExpired"
	}
	return web.Render(c, http.StatusOK, views.SignOutPage(views.SignOut{
		Page:      h.kit.Page(c, rq, "TitleSignOut"),
		Action:    h.base.URL("/signout"),
		CSRFToken: rq.CSRFToken,
		Error:     msg,
	}))
}

// getError shows the error page. Sign-in-class codes bounce to the sign-in
// page (as v4 does) so the message appears beside the sign-in options.
func (h *Handler) getError(c echo.Context, rq *web.Request) error {
	code := signin.Code(c.QueryParam("error"))
	if signinErrors[code] {
		return c.Redirect(http.StatusFound, h.kit.WithLang(c, rq, h.base.URL("/signin")+"?error="+url.QueryEscape(string(code))))
	}
	if h.pages.Error != "" {
		return c.Redirect(http.StatusFound, web.WithQuery(h.pages.Error, url.Values{"error": {string(code)}}))
	}
	ep := errorPageFor(code)
	d := views.Error{
		Page:     h.kit.Page(c, rq, "TitleError"),
		Heading:  ep.heading,
		Lines:    ep.lines,
		HomeURL:  h.kit.Origin(),
		HomeHost: web.HostOf(h.base.Origin),
	}
	if ep.signIn {
		d.SignInURL = h.base.URL("/signin")
	}
	return web.Render(c, ep.status, views.ErrorPage(d))
}

// getVerifyRequest shows "check your email", or redirects to pages.verify_request.
func (h *Handler) getVerifyRequest(c echo.Context, rq *web.Request) error {
	if h.pages.VerifyRequest != "" {
		return c.Redirect(http.StatusFound, h.pages.VerifyRequest)
	}
	return web.Render(c, http.StatusOK, views.VerifyRequestPage(views.VerifyRequest{
		Page:     h.kit.Page(c, rq, "TitleVerifyRequest"),
		HomeURL:  h.kit.Origin(),
		HomeHost: web.HostOf(h.base.Origin),
	}))
}
