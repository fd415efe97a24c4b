package app

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// The signed-in password page. A user with a password changes it by typing
// the current one. A user without one (signed up with OAuth or an e-mail
// link) gets a reset link mailed to their address: the session alone does
// not set a password, since a borrowed or stolen session must not be
// turned into a lasting credential; the inbox re-verifies the person.
// Either way every session of the user ends and the person signs in again.

// accountUser is the signed-in user of the request. Without one, or when
// the page is off or the database fails, it has answered (answered true,
// and err is the answer's).
func (a *App) accountUser(c echo.Context, rq *web.Request) (u *models.User, answered bool, err error) {
	if !a.pw.enabled {
		return nil, true, echo.ErrNotFound
	}
	ctx := c.Request().Context()
	id, err := a.browser(c).SignedInUser(ctx)
	if err == nil {
		u, err = a.pw.rules.SignedInUser(ctx, id)
	}
	switch {
	case errors.Is(err, accounts.ErrSignedOut):
		return nil, true, a.toSignIn(c, rq)
	case err != nil:
		return nil, true, a.tryLater(c, rq, "account page", err)
	}
	return u, false, nil
}

// toSignIn sends a browser without a session to the sign-in page, back here
// afterwards.
func (a *App) toSignIn(c echo.Context, rq *web.Request) error {
	back := a.base.URL("/account/password")
	return c.Redirect(http.StatusFound, a.kit.WithLang(c, rq, a.base.URL("/signin")+"?"+url.Values{"callbackUrl": {back}}.Encode()))
}

// getAccountPassword is the page.
func (a *App) getAccountPassword(c echo.Context, rq *web.Request) error {
	return a.accountPage(c, rq, http.StatusOK, csrfMessage(c))
}

// accountPage renders the page for the signed-in user with a message.
func (a *App) accountPage(c echo.Context, rq *web.Request, status int, msg string) error {
	u, answered, err := a.accountUser(c, rq)
	if answered {
		return err
	}
	has, err := a.pw.rules.HasPassword(c.Request().Context(), u.ID)
	if err != nil {
		return a.tryLater(c, rq, "account page", err)
	}
	d := a.passwordForm(c, rq, "TitleAccountPassword", "/account/password")
	d.Email, d.HasPassword, d.Error = deref(u.Email), has, msg
	return web.Render(c, status, views.AccountPasswordPage(d))
}

// postAccountPassword changes the password, or mails the link that adds one.
func (a *App) postAccountPassword(c echo.Context, rq *web.Request) error {
	u, answered, err := a.accountUser(c, rq)
	if answered {
		return err
	}
	err = a.pw.rules.ChangePassword(c.Request().Context(), u, accounts.PasswordChange{
		Current: rq.Form.Get("currentPassword"), Password: rq.Form.Get("password"), ClientIP: c.RealIP(),
	})
	switch {
	case errors.Is(err, accounts.ErrNoPassword):
		return a.addPasswordByEmail(c, rq, u)
	case errors.Is(err, accounts.ErrThrottled):
		return a.accountPage(c, rq, http.StatusTooManyRequests, msgThrottled)
	case errors.Is(err, accounts.ErrWrongPassword):
		return a.accountPage(c, rq, http.StatusBadRequest, "WrongCurrentPassword")
	case errors.Is(err, accounts.ErrPolicy):
		return a.accountPage(c, rq, http.StatusBadRequest, policyMessage(err))
	case errors.Is(err, accounts.ErrChangedMeanwhile):
		return a.accountPage(c, rq, http.StatusConflict, "PasswordChangedMeanwhile")
	case err != nil:
		return a.tryLater(c, rq, "password change", err)
	}
	return a.passwordChanged(c, rq)
}

// addPasswordByEmail mails the signed-in user a link to set a password.
func (a *App) addPasswordByEmail(c echo.Context, rq *web.Request, u *models.User) error {
	err := a.pw.rules.AddPasswordByEmail(a.kit.MailContext(c, rq), u, c.RealIP())
	switch {
	case errors.Is(err, accounts.ErrNoConfirmedEmail):
		return a.accountPage(c, rq, http.StatusBadRequest, "NoConfirmedEmail")
	case errors.Is(err, accounts.ErrRateLimited):
		return a.accountPage(c, rq, http.StatusTooManyRequests, msgRateLimited)
	case err != nil:
		return a.tryLater(c, rq, "add password", err)
	}
	return a.checkEmail(c, rq, "AddPasswordCheckEmail")
}
