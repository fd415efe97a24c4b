package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
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
	addr, err := email.Normalize(rq.Form.Get("email"))
	if err != nil {
		return form(http.StatusBadRequest, "", msgBadAddress)
	}
	ctx := a.kit.MailContext(c, rq)
	u, err := a.store.UserByEmail(ctx, addr)
	switch {
	case errors.Is(err, models.ErrNotFound):
		u = nil
	case err != nil:
		return a.tryLater(c, rq, "reset", err)
	}
	ok, err := a.allowMailTo(c, addr, u)
	switch {
	case err != nil:
		return a.tryLater(c, rq, "reset limits", err)
	case !ok:
		return form(http.StatusTooManyRequests, addr, msgRateLimited)
	}
	if err := a.sendReset(ctx, addr, u); err != nil {
		return a.tryLater(c, rq, "reset", err)
	}
	return a.checkEmail(c, rq, "ResetCheckEmail")
}

// sendReset mails addr, whose user is u (nil: none), its reset link, or
// the e-mail that says there is no account that could use one.
func (a *App) sendReset(ctx context.Context, addr string, u *models.User) error {
	if u != nil {
		// A user whose address is unverified gets the link too: completing
		// it proves the address, and the owner's proof wins (a claimant
		// with other sign-in methods loses the address and the owner gets
		// a new user: models.CompletePasswordReset).
		return a.sendResetLink(ctx, u.ID, addr)
	}
	signUp := ""
	if !a.signUpOff() {
		signUp = a.base.URL("/signup")
	}
	return a.pw.mail.send(ctx, addr, views.ResetUnknownEmail(a.kit.MailLang(ctx), web.HostOf(a.base.Origin), signUp))
}

// canTakePassword is the account page's rule for "add a password by
// e-mail": a user whose address came unverified from an OAuth provider may
// not be the address's owner, so it is told it has no confirmed address
// rather than mailing the owner a link (which, completed, would take the
// address from it: models.CompletePasswordReset).
func (a *App) canTakePassword(ctx context.Context, u *models.User) (bool, error) {
	if u.Email == nil {
		return false, nil
	}
	if u.EmailVerified != nil {
		return true, nil
	}
	accounts, err := a.store.AccountsOf(ctx, u.ID)
	return len(accounts) == 0, err
}

// sendResetLink stores a reset token for the user and mails its link.
func (a *App) sendResetLink(ctx context.Context, userID, addr string) error {
	tokenHash, link := a.newFlowLink(ctx, purposeReset, "/reset/confirm")
	if err := a.store.CreatePasswordReset(ctx, userID, tokenHash, a.now().Add(resetLinkMaxAge)); err != nil {
		return err
	}
	if err := a.pw.mail.send(ctx, addr, views.ResetEmail(a.kit.MailLang(ctx), web.HostOf(a.base.Origin), link)); err != nil {
		if derr := a.store.DeletePasswordReset(ctx, userID, tokenHash); derr != nil {
			err = errors.Join(err, derr)
		}
		return err
	}
	return nil
}

// pendingReset finds the live reset of a link's token and its user.
func (a *App) pendingReset(c echo.Context, token string) (string, *models.User, error) {
	if token == "" {
		return "", nil, models.ErrNotFound
	}
	ctx := c.Request().Context()
	for _, h := range a.flowTokenHashes(purposeReset, token) {
		userID, err := a.store.PasswordResetByHash(ctx, h, a.now())
		if errors.Is(err, models.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		u, err := a.store.UserByID(ctx, userID)
		return h, u, err
	}
	return "", nil, models.ErrNotFound
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
		_, u, err := a.pendingReset(c, token)
		if err != nil {
			return a.linkFailed(c, rq, err, "/reset")
		}
		linked, err := a.store.AccountsOf(c.Request().Context(), u.ID)
		if err != nil {
			return a.tryLater(c, rq, "reset page", err)
		}
		d := a.passwordForm(c, rq, "TitleResetConfirm", "/reset/confirm")
		d.Email, d.Token, d.Error, d.HasLinked = deref(u.Email), token, msg, len(linked) > 0
		return web.Render(c, status, views.ResetPasswordPage(d))
	}
}

// postResetConfirm sets the new password.
func (a *App) postResetConfirm(c echo.Context, rq *web.Request) error {
	if a.resetOff() {
		return echo.ErrNotFound
	}
	ctx := c.Request().Context()
	pw := rq.Form.Get("password")
	tokenHash, u, err := a.pendingReset(c, rq.Form.Get("token"))
	if err != nil {
		return a.linkFailed(c, rq, err, "/reset")
	}
	if err := a.pw.policy.Check(pw, deref(u.Email)); err != nil {
		a.log.Info("password reset refused: password policy", "reason", err.Error())
		return a.resetConfirmPage(http.StatusBadRequest, policyMessage(err))(c, rq)
	}
	hash, err := a.pw.hasher.Hash(pw)
	if err != nil {
		return a.resetConfirmPage(http.StatusBadRequest, policyMessage(err))(c, rq)
	}
	at := a.now()
	ended, err := a.store.CompletePasswordReset(ctx, u.ID, tokenHash, hash, at)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return a.deadLink(c, rq, "/reset")
	case err != nil:
		return a.tryLater(c, rq, "reset", err)
	}
	a.log.Info("password reset", "user", u.ID, "database_sessions_ended", ended)
	a.sessionsEnded(ctx, at)
	if asksRemoveLinked(rq) {
		// The user has a password now: every linked method may go.
		if err := a.removeLinkedMethods(ctx, u, true); err != nil {
			return a.tryLater(c, rq, "reset: remove linked sign-in methods (the password was changed)", err)
		}
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
