package app

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// codeMissingToken is the lower-case code next-auth v4 redirects to for a
// link without a token (it renders the 500 "Server error" page).
const codeMissingToken signin.Code = "configuration"

// emailCallback redeems a magic link. GET is the link itself, or with
// confirm: true only a page whose button POSTs it; that POST has passed the
// route's CSRF check. HEAD never gets here (the router answers 400), so
// scanners probing links with HEAD spend nothing.
func (a *App) emailCallback(c echo.Context, rq *request, p config.Provider) error {
	params := c.QueryParams()
	post := c.Request().Method == http.MethodPost
	if post {
		params = rq.form
	}
	token := params.Get("token")
	switch {
	case token == "":
		return signin.Fail(codeMissingToken, errors.New("e-mail callback without a token"))
	case !post && p.Confirm:
		return a.confirmPage(c, rq, p, params, http.StatusOK, "")
	}
	out, err := a.core.RedeemLink(c.Request().Context(), a.browser(c), p.ID, token, params.Get("email"))
	if err != nil {
		return err
	}
	return a.afterSignIn(c, rq, out)
}

// confirmPage shows the "Sign in" button for a link instead of using it.
// It looks nothing up, so it tells a scanner nothing about the token.
func (a *App) confirmPage(c echo.Context, rq *request, p config.Provider, params url.Values, status int, msg string) error {
	if params.Get("token") == "" {
		return signin.Fail(codeMissingToken, errors.New("e-mail callback without a token"))
	}
	noStore(c)
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return render(c, status, views.ConfirmSignInPage(views.ConfirmSignIn{
		Page:        a.page("Sign In"),
		Action:      a.base.URL("/callback/" + p.ID),
		CSRFToken:   rq.csrfToken,
		Token:       params.Get("token"),
		Email:       params.Get("email"),
		CallbackURL: rq.callbackURL,
		Host:        hostOf(a.base.Origin),
		Error:       msg,
	}))
}
