package accountpages

import (
	"errors"
	"net/http"

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

// accountPassword is the page's path, where signing in comes back to.
const accountPassword = "/account/password"

// passwordUser runs a, an action of the password page, for the signed-in
// user (web.Kit.RequireUser), when the page is on. A user deleted while
// the session lives on signs in first, as a browser without a session.
func (h *Handler) passwordUser(a func(c echo.Context, rq *web.Request, u *models.User) error) web.Action {
	signedIn := h.kit.RequireUser(h.users, accountPassword, func(c echo.Context, rq *web.Request, userID string) error {
		u, err := h.rules.SignedInUser(c.Request().Context(), userID)
		switch {
		case errors.Is(err, accounts.ErrSignedOut):
			return h.kit.ToSignIn(c, rq, accountPassword)
		case err != nil:
			return tryLater("account page", err)
		}
		return a(c, rq, u)
	})
	return func(c echo.Context, rq *web.Request) error {
		if !h.offers.Passwords {
			return web.NotSupported
		}
		return signedIn(c, rq)
	}
}

// getAccountPassword is the page.
func (h *Handler) getAccountPassword(c echo.Context, rq *web.Request, u *models.User) error {
	return h.accountPage(c, rq, u, http.StatusOK, csrfMessage(c))
}

// accountPage renders the page for the signed-in user with a message.
func (h *Handler) accountPage(c echo.Context, rq *web.Request, u *models.User, status int, msg string) error {
	has, err := h.rules.HasPassword(c.Request().Context(), u.ID)
	if err != nil {
		return tryLater("account page", err)
	}
	d := h.passwordForm(c, rq, "TitleAccountPassword", accountPassword)
	d.Email, d.HasPassword, d.Error = deref(u.Email), has, msg
	return web.Render(c, status, views.AccountPasswordPage(d))
}

// postAccountPassword changes the password, or mails the link that adds one.
func (h *Handler) postAccountPassword(c echo.Context, rq *web.Request, u *models.User) error {
	changed, err := h.rules.ChangePassword(c.Request().Context(), u, accounts.PasswordChange{
		Current: rq.Form.Get("currentPassword"), Password: rq.Form.Get("password"), ClientIP: c.RealIP(),
		Device: h.kit.PasswordDevice(c),
	})
	switch {
	case errors.Is(err, accounts.ErrNoPassword):
		return h.addPasswordByEmail(c, rq, u)
	case errors.Is(err, accounts.ErrThrottled):
		return h.accountPage(c, rq, u, http.StatusTooManyRequests, msgThrottled)
	case errors.Is(err, accounts.ErrWrongPassword):
		return h.accountPage(c, rq, u, http.StatusBadRequest, "WrongCurrentPassword")
	case errors.Is(err, accounts.ErrPolicy):
		return h.accountPage(c, rq, u, policyStatus(c, err), policyMessage(err))
	case errors.Is(err, accounts.ErrChangedMeanwhile):
		return h.accountPage(c, rq, u, http.StatusConflict, "PasswordChangedMeanwhile")
	case err != nil:
		return tryLater("password change", err)
	}
	h.kit.SetPasswordDevice(c, changed.Device, changed.DeviceExpires)
	return h.passwordChanged(c, rq)
}

// addPasswordByEmail mails the signed-in user a link to set a password.
func (h *Handler) addPasswordByEmail(c echo.Context, rq *web.Request, u *models.User) error {
	err := h.rules.AddPasswordByEmail(h.kit.MailContext(c, rq), u, c.RealIP())
	switch {
	case errors.Is(err, accounts.ErrNoConfirmedEmail):
		return h.accountPage(c, rq, u, http.StatusBadRequest, "NoConfirmedEmail")
	case errors.Is(err, accounts.ErrRateLimited):
		return h.accountPage(c, rq, u, http.StatusTooManyRequests, msgRateLimited)
	case err != nil:
		return tryLater("add password", err)
	}
	return h.checkEmail(c, rq, "AddPasswordCheckEmail")
}
