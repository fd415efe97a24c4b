package accountpages

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// Password reset. POST /reset mails a reset link to an address that has
// an account, and a "there is no such account" e-mail to any other: one look-up and one e-mail either way, and the same
// page. The link (30 minutes, once) opens a form; its POST sets the new
// password, marks the address verified (the link proved it) and ends every
// session of the user, this browser's included, in one transaction; when
// the form asks (removeLinked), the user's linked sign-in methods go too.
// Then the person signs in with the new password. The same link is how a user
// without a password adds one (/account/password).

// getReset is the "forgot your password" form.
func (h *Handler) getReset(c echo.Context, rq *web.Request) error {
	if h.offers.resetOff() {
		return web.NotSupported
	}
	d := h.passwordForm(c, rq, "TitleReset", "/reset")
	d.Email, d.Error = c.QueryParam("email"), csrfMessage(c)
	return web.Render(c, http.StatusOK, views.ResetRequestPage(d))
}

// postReset takes the form.
func (h *Handler) postReset(c echo.Context, rq *web.Request) error {
	if h.offers.resetOff() {
		return web.NotSupported
	}
	form := func(status int, addr, msg string) error {
		d := h.passwordForm(c, rq, "TitleReset", "/reset")
		d.Email, d.Error = addr, msg
		return web.Render(c, status, views.ResetRequestPage(d))
	}
	addr, err := h.rules.StartReset(h.kit.MailContext(c, rq), rq.Form.Get("email"), c.RealIP())
	switch {
	case errors.Is(err, accounts.ErrBadAddress):
		return form(http.StatusBadRequest, "", msgBadAddress)
	case errors.Is(err, accounts.ErrRateLimited):
		return form(http.StatusTooManyRequests, addr, msgRateLimited)
	case err != nil:
		return tryLater("reset", err)
	}
	return h.checkEmail(c, rq, "ResetCheckEmail")
}

// getResetConfirm is the link's page; opening it spends nothing.
func (h *Handler) getResetConfirm(c echo.Context, rq *web.Request) error {
	return h.resetConfirmPage(http.StatusOK, "")(c, rq)
}

// resetConfirmPage renders the link's page with a message.
func (h *Handler) resetConfirmPage(status int, msg string) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		if h.offers.resetOff() {
			return web.NotSupported
		}
		token := linkToken(c, rq)
		p, err := h.rules.OpenReset(c.Request().Context(), token)
		if err != nil {
			return h.linkFailed(err, "/reset")
		}
		d := h.passwordForm(c, rq, "TitleResetConfirm", "/reset/confirm")
		d.Email, d.Token, d.Error, d.HasLinked = deref(p.User.Email), token, msg, p.HasLinked
		return web.Render(c, status, views.ResetPasswordPage(d))
	}
}

// postResetConfirm sets the new password.
func (h *Handler) postResetConfirm(c echo.Context, rq *web.Request) error {
	if h.offers.resetOff() {
		return web.NotSupported
	}
	changed, err := h.rules.CompleteReset(c.Request().Context(), accounts.ResetRequest{
		Token: rq.Form.Get("token"), Password: rq.Form.Get("password"), RemoveLinked: asksRemoveLinked(rq),
		Device: h.kit.PasswordDevice(c),
	})
	// Set whenever the password was set, even if what follows failed.
	h.kit.SetPasswordDevice(c, changed.Device, changed.DeviceExpires)
	switch {
	case errors.Is(err, accounts.ErrPolicy):
		return h.resetConfirmPage(policyStatus(c, err), policyMessage(err))(c, rq)
	case err != nil:
		return h.linkFailed(err, "/reset")
	}
	return h.passwordChanged(c, rq)
}

// passwordChanged is the answer of a reset or change: every session of the
// user has ended, this one included; the button signs in again.
func (h *Handler) passwordChanged(c echo.Context, rq *web.Request) error {
	d := h.passwordForm(c, rq, "", "")
	return h.tell(c, rq, http.StatusOK, views.PasswordNotice{
		Heading: "PasswordChangedHeading",
		Lines:   []string{"PasswordChangedLine"},
		LinkURL: d.SignInURL, LinkText: "SignInButton",
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
