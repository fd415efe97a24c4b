package app

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

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
	if err == nil && id != "" {
		u, err = a.store.UserByID(ctx, id)
	}
	switch {
	case errors.Is(err, models.ErrNotFound) || err == nil && u == nil:
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
	hash, err := a.store.PasswordHash(c.Request().Context(), u.ID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return a.tryLater(c, rq, "account page", err)
	}
	d := a.passwordForm(c, rq, "TitleAccountPassword", "/account/password")
	d.Email, d.HasPassword, d.Error = deref(u.Email), hash != "", msg
	return web.Render(c, status, views.AccountPasswordPage(d))
}

// postAccountPassword changes the password, or mails the link that adds one.
func (a *App) postAccountPassword(c echo.Context, rq *web.Request) error {
	u, answered, err := a.accountUser(c, rq)
	if answered {
		return err
	}
	ctx := c.Request().Context()
	old, err := a.store.PasswordHash(ctx, u.ID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return a.addPasswordByEmail(c, rq, u)
	case err != nil:
		return a.tryLater(c, rq, "account page", err)
	}
	switch status := a.checkPassword(c, deref(u.Email), old, rq.Form.Get("currentPassword")); status {
	case http.StatusTooManyRequests:
		return a.accountPage(c, rq, status, msgThrottled)
	case http.StatusBadRequest:
		return a.accountPage(c, rq, status, "WrongCurrentPassword")
	}
	pw := rq.Form.Get("password")
	if err := a.pw.policy.Check(pw, deref(u.Email)); err != nil {
		a.log.Info("password change refused: password policy", "reason", err.Error())
		return a.accountPage(c, rq, http.StatusBadRequest, policyMessage(err))
	}
	hash, err := a.pw.hasher.Hash(pw)
	if err != nil {
		return a.accountPage(c, rq, http.StatusBadRequest, policyMessage(err))
	}
	at := a.now()
	ended, err := a.store.ChangePassword(ctx, u.ID, old, hash, at)
	switch {
	case errors.Is(err, models.ErrConflict): // changed by another request meanwhile
		return a.accountPage(c, rq, http.StatusConflict, "PasswordChangedMeanwhile")
	case err != nil:
		return a.tryLater(c, rq, "password change", err)
	}
	a.log.Info("password changed", "user", u.ID, "database_sessions_ended", ended)
	a.sessionsEnded(ctx, at)
	return a.passwordChanged(c, rq)
}

// addPasswordByEmail mails the signed-in user a link to set a password.
func (a *App) addPasswordByEmail(c echo.Context, rq *web.Request, u *models.User) error {
	ctx := a.kit.MailContext(c, rq)
	can, err := a.canTakePassword(ctx, u)
	switch {
	case err != nil:
		return a.tryLater(c, rq, "add password", err)
	case !can || !a.pw.canMail:
		return a.accountPage(c, rq, http.StatusBadRequest, "NoConfirmedEmail")
	}
	ok, err := a.allowMail(c, *u.Email)
	switch {
	case err != nil:
		return a.tryLater(c, rq, "add password limits", err)
	case !ok:
		return a.accountPage(c, rq, http.StatusTooManyRequests, msgRateLimited)
	}
	if err := a.sendResetLink(ctx, u.ID, *u.Email); err != nil {
		return a.tryLater(c, rq, "add password", err)
	}
	return a.checkEmail(c, rq, "AddPasswordCheckEmail")
}
