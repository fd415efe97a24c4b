package accountpages

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
func (h *Handler) accountUser(c echo.Context, rq *web.Request) (u *models.User, answered bool, err error) {
	if !h.offers.Passwords {
		return nil, true, echo.ErrNotFound
	}
	ctx := c.Request().Context()
	id, err := h.browser(c).SignedInUser(ctx)
	if err == nil {
		u, err = h.rules.SignedInUser(ctx, id)
	}
	switch {
	case errors.Is(err, accounts.ErrSignedOut):
		return nil, true, h.toSignIn(c, rq)
	case err != nil:
		return nil, true, tryLater("account page", err)
	}
	return u, false, nil
}

// toSignIn sends a browser without a session to the sign-in page, back here
// afterwards.
func (h *Handler) toSignIn(c echo.Context, rq *web.Request) error {
	back := h.base.URL("/account/password")
	return c.Redirect(http.StatusFound, h.kit.WithLang(c, rq, h.base.URL("/signin")+"?"+url.Values{"callbackUrl": {back}}.Encode()))
}

// getAccountPassword is the page.
func (h *Handler) getAccountPassword(c echo.Context, rq *web.Request) error {
	return h.accountPage(c, rq, http.StatusOK, csrfMessage(c))
}

// accountPage renders the page for the signed-in user with a message.
func (h *Handler) accountPage(c echo.Context, rq *web.Request, status int, msg string) error {
	u, answered, err := h.accountUser(c, rq)
	if answered {
		return err
	}
	has, err := h.rules.HasPassword(c.Request().Context(), u.ID)
	if err != nil {
		return tryLater("account page", err)
	}
	d := h.passwordForm(c, rq, "TitleAccountPassword", "/account/password")
	d.Email, d.HasPassword, d.Error = deref(u.Email), has, msg
	return web.Render(c, status, views.AccountPasswordPage(d))
}

// postAccountPassword changes the password, or mails the link that adds one.
func (h *Handler) postAccountPassword(c echo.Context, rq *web.Request) error {
	u, answered, err := h.accountUser(c, rq)
	if answered {
		return err
	}
	err = h.rules.ChangePassword(c.Request().Context(), u, accounts.PasswordChange{
		Current: rq.Form.Get("currentPassword"), Password: rq.Form.Get("password"), ClientIP: c.RealIP(),
	})
	switch {
	case errors.Is(err, accounts.ErrNoPassword):
		return h.addPasswordByEmail(c, rq, u)
	case errors.Is(err, accounts.ErrThrottled):
		return h.accountPage(c, rq, http.StatusTooManyRequests, msgThrottled)
	case errors.Is(err, accounts.ErrWrongPassword):
		return h.accountPage(c, rq, http.StatusBadRequest, "WrongCurrentPassword")
	case errors.Is(err, accounts.ErrPolicy):
		return h.accountPage(c, rq, http.StatusBadRequest, policyMessage(err))
	case errors.Is(err, accounts.ErrChangedMeanwhile):
		return h.accountPage(c, rq, http.StatusConflict, "PasswordChangedMeanwhile")
	case err != nil:
		return tryLater("password change", err)
	}
	return h.passwordChanged(c, rq)
}

// addPasswordByEmail mails the signed-in user a link to set a password.
func (h *Handler) addPasswordByEmail(c echo.Context, rq *web.Request, u *models.User) error {
	err := h.rules.AddPasswordByEmail(h.kit.MailContext(c, rq), u, c.RealIP())
	switch {
	case errors.Is(err, accounts.ErrNoConfirmedEmail):
		return h.accountPage(c, rq, http.StatusBadRequest, "NoConfirmedEmail")
	case errors.Is(err, accounts.ErrRateLimited):
		return h.accountPage(c, rq, http.StatusTooManyRequests, msgRateLimited)
	case err != nil:
		return tryLater("add password", err)
	}
	return h.checkEmail(c, rq, "AddPasswordCheckEmail")
}
