package app

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

func (a *App) resetOff() bool { return !a.pw.enabled || !a.pw.canMail }

// getReset is the "forgot your password" form.
func (a *App) getReset(c echo.Context, rq *web.Request) error {
	if a.resetOff() {
		return echo.ErrNotFound
	}
	d := a.passwordForm(c, rq, "TitleReset", "/reset")
	d.Email, d.Error = c.QueryParam("email"), csrfMessage(c)
	return web.Render(c, http.StatusOK, views.ResetRequestPage(d))
}

// postReset takes the form.
func (a *App) postReset(c echo.Context, rq *web.Request) error {
	if a.resetOff() {
		return echo.ErrNotFound
	}
	form := func(status int, addr, msg string) error {
		d := a.passwordForm(c, rq, "TitleReset", "/reset")
		d.Email, d.Error = addr, msg
		return web.Render(c, status, views.ResetRequestPage(d))
	}
	addr, err := a.pw.rules.StartReset(a.kit.MailContext(c, rq), rq.Form.Get("email"), c.RealIP())
	switch {
	case errors.Is(err, accounts.ErrBadAddress):
		return form(http.StatusBadRequest, "", msgBadAddress)
	case errors.Is(err, accounts.ErrRateLimited):
		return form(http.StatusTooManyRequests, addr, msgRateLimited)
	case err != nil:
		return a.tryLater(c, rq, "reset", err)
	}
	return a.checkEmail(c, rq, "ResetCheckEmail")
}

// getResetConfirm is the link's page; opening it spends nothing.
func (a *App) getResetConfirm(c echo.Context, rq *web.Request) error {
	return a.resetConfirmPage(http.StatusOK, "")(c, rq)
}

// resetConfirmPage renders the link's page with a message.
func (a *App) resetConfirmPage(status int, msg string) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		if a.resetOff() {
			return echo.ErrNotFound
		}
		token := linkToken(c, rq)
		p, err := a.pw.rules.OpenReset(c.Request().Context(), token)
		if err != nil {
			return a.linkFailed(c, rq, err, "/reset")
		}
		d := a.passwordForm(c, rq, "TitleResetConfirm", "/reset/confirm")
		d.Email, d.Token, d.Error, d.HasLinked = deref(p.User.Email), token, msg, p.HasLinked
		return web.Render(c, status, views.ResetPasswordPage(d))
	}
}

// postResetConfirm sets the new password.
func (a *App) postResetConfirm(c echo.Context, rq *web.Request) error {
	if a.resetOff() {
		return echo.ErrNotFound
	}
	err := a.pw.rules.CompleteReset(c.Request().Context(), accounts.ResetRequest{
		Token: rq.Form.Get("token"), Password: rq.Form.Get("password"), RemoveLinked: asksRemoveLinked(rq),
	})
	switch {
	case errors.Is(err, accounts.ErrPolicy):
		return a.resetConfirmPage(http.StatusBadRequest, policyMessage(err))(c, rq)
	case err != nil:
		return a.linkFailed(c, rq, err, "/reset")
	}
	return a.passwordChanged(c, rq)
}

// passwordChanged is the answer of a reset or change: every session of the
// user has ended, this one included; the button signs in again.
func (a *App) passwordChanged(c echo.Context, rq *web.Request) error {
	d := a.passwordForm(c, rq, "", "")
	return a.notice(c, rq, http.StatusOK, views.PasswordNotice{
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
