package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// Sign-up. Nothing about an account is written before its address is
// proved: POST /signup stores only a pending sign-up (the link's token hash
// and the password's hash) and mails the link; an address that has an
// account gets a "you already have one" e-mail instead, and the page is the
// same byte for byte. The link's page asks for the password again, so only
// the person who chose it can finish: someone who signs up with a victim's
// address cannot get the victim to adopt their password by clicking
// (account pre-hijacking), and creates nothing the victim would meet when
// signing in any other way.

func (a *App) signUpOff() bool { return !a.pw.enabled || !a.pw.signUp || !a.pw.canMail }

// getSignUp is the sign-up form.
func (a *App) getSignUp(c echo.Context, rq *web.Request) error {
	if a.signUpOff() {
		return echo.ErrNotFound
	}
	d := a.passwordForm(c, rq, "TitleSignUp", "/signup")
	d.Error = csrfMessage(c)
	return web.Render(c, http.StatusOK, views.SignUpPage(d))
}

// signUpForm shows the form again with a refusal.
func (a *App) signUpForm(c echo.Context, rq *web.Request, status int, addr, msg string) error {
	d := a.passwordForm(c, rq, "TitleSignUp", "/signup")
	d.Email, d.Error = addr, msg
	return web.Render(c, status, views.SignUpPage(d))
}

// postSignUp takes the form: address and password are checked (the same
// for every address), the password hashed (always: the same work for
// every address), then one pending sign-up is stored and one e-mail goes
// out, whichever fits (sendSignUpMail).
func (a *App) postSignUp(c echo.Context, rq *web.Request) error {
	if a.signUpOff() {
		return echo.ErrNotFound
	}
	ctx := a.kit.MailContext(c, rq)
	typed, pw := rq.Form.Get("email"), rq.Form.Get("password")
	addr, err := email.Normalize(typed)
	if err != nil {
		return a.signUpForm(c, rq, http.StatusBadRequest, "", msgBadAddress)
	}
	if err := a.pw.policy.Check(pw, addr); err != nil {
		a.log.Info("sign-up refused: password policy", "reason", err.Error())
		return a.signUpForm(c, rq, http.StatusBadRequest, addr, policyMessage(err))
	}
	// The SignIn hook (callbacks.allowed_email_domains, or an operator's
	// own) is asked first, about the address alone: an account it would
	// never let in is not made. Its user is the stand-in of a new address
	// whether or not one exists, so its answer tells nothing about that.
	standIn := models.User{ID: addr, Email: &addr}
	if allow, _ := a.hooks.SignIn(ctx, signin.SignInInput{User: standIn, Provider: a.pw.id, Type: config.TypeCredentials,
		Email: addr, EmailVerified: true, VerificationRequest: true}); !allow {
		a.log.Info("sign-up refused by the SignIn hook")
		return a.signUpForm(c, rq, http.StatusBadRequest, addr, "SignUpRefused")
	}
	// An address with an account gets the e-mail that points its owner to
	// a reset: for a verified one, the global budget does not apply.
	u, err := a.store.UserByEmail(ctx, addr)
	switch {
	case errors.Is(err, models.ErrNotFound):
		u = nil
	case err != nil:
		return a.tryLater(c, rq, "sign-up", err)
	}
	ok, err := a.allowMailTo(c, addr, u)
	switch {
	case err != nil:
		return a.tryLater(c, rq, "sign-up limits", err)
	case !ok:
		return a.signUpForm(c, rq, http.StatusTooManyRequests, addr, msgRateLimited)
	}
	hash, err := a.pw.hasher.Hash(pw)
	if err != nil { // the policy has read it: not expected
		return a.signUpForm(c, rq, http.StatusBadRequest, addr, policyMessage(err))
	}
	// An unverified holder's address gets the sign-up link: the owner's
	// proof wins (models.CompletePasswordSignUp).
	if err := a.sendSignUpMail(ctx, addr, hash, u != nil && u.EmailVerified != nil); err != nil {
		return a.tryLater(c, rq, "sign-up", err)
	}
	return a.checkEmail(c, rq, "SignUpCheckEmail")
}

// sendSignUpMail stores a pending sign-up and mails its link, or, when the
// address has an account (exists), the "you already have one" e-mail. Both
// do the same work, so the answer's time does not tell whether an address
// has an account (the insert alone took some 4 ms on SQLite): the pending
// row is stored either way (for an existing account it is inert, as its
// link is never sent, and goes with the expired links) and one e-mail is
// sent; a failed delivery removes the row again and answers the same.
// Sending after answering would hide the time too, but a failed delivery
// could then no longer be told to the person, and a stopping instance
// would have mail left to send.
func (a *App) sendSignUpMail(ctx context.Context, addr, hash string, exists bool) error {
	tokenHash, link := a.newFlowLink(ctx, purposeSignUp, "/signup/verify")
	if err := a.store.CreatePasswordSignUp(ctx, addr, tokenHash, hash, a.now().Add(signUpLinkMaxAge)); err != nil {
		return err
	}
	host := web.HostOf(a.base.Origin)
	mail := views.SignUpEmail(a.kit.MailLang(ctx), host, link)
	if exists {
		mail = views.SignUpExistingEmail(a.kit.MailLang(ctx), host, a.base.URL("/reset"))
	}
	if err := a.pw.mail.send(ctx, addr, mail); err != nil {
		if derr := a.store.DeletePasswordSignUp(ctx, tokenHash); derr != nil {
			err = errors.Join(err, derr)
		}
		return err
	}
	return nil
}

// checkEmail is the answer to every sign-up or reset request that was
// taken: it depends on nothing but the flow.
func (a *App) checkEmail(c echo.Context, rq *web.Request, line string) error {
	return a.notice(c, rq, http.StatusOK, views.PasswordNotice{Heading: "CheckEmailHeading", Lines: []string{line}})
}

// pendingSignUp finds the live sign-up of a link's token.
func (a *App) pendingSignUp(c echo.Context, token string) (*models.PendingSignUp, error) {
	if token == "" {
		return nil, models.ErrNotFound
	}
	for _, h := range a.flowTokenHashes(purposeSignUp, token) {
		p, err := a.store.PasswordSignUpByHash(c.Request().Context(), h, a.now())
		if !errors.Is(err, models.ErrNotFound) {
			return p, err
		}
	}
	return nil, models.ErrNotFound
}

// getSignUpVerify is the link's page; opening it spends nothing.
func (a *App) getSignUpVerify(c echo.Context, rq *web.Request) error {
	return a.signUpVerifyPage(http.StatusOK, "")(c, rq)
}

// signUpVerifyPage renders the link's page for the token in the query or
// the posted form, with a message.
func (a *App) signUpVerifyPage(status int, msg string) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		if a.signUpOff() {
			return echo.ErrNotFound
		}
		token := linkToken(c, rq)
		p, err := a.pendingSignUp(c, token)
		if err != nil {
			return a.linkFailed(c, rq, err, "/signup")
		}
		d := a.passwordForm(c, rq, "TitleConfirmSignUp", "/signup/verify")
		d.Email, d.Token, d.Error = p.Email, token, msg
		return web.Render(c, status, views.ConfirmSignUpPage(d))
	}
}

// postSignUpVerify creates the account when the password typed is the one
// chosen at sign-up: the user, verified, with that password, in one
// transaction that spends the link and every other pending sign-up of the
// address. An address that got an account meanwhile keeps it unchanged.
func (a *App) postSignUpVerify(c echo.Context, rq *web.Request) error {
	if a.signUpOff() {
		return echo.ErrNotFound
	}
	p, err := a.pendingSignUp(c, rq.Form.Get("token"))
	if err != nil {
		return a.linkFailed(c, rq, err, "/signup")
	}
	pw := rq.Form.Get("password")
	switch status := a.checkPassword(c, p.Email, p.PasswordHash, pw); status {
	case http.StatusTooManyRequests:
		return a.signUpVerifyPage(status, msgThrottled)(c, rq)
	case http.StatusBadRequest:
		return a.signUpVerifyPage(status, "SignUpWrongPassword")(c, rq)
	}
	u, err := a.store.CompletePasswordSignUp(c.Request().Context(), p.TokenHash, a.now())
	switch {
	case errors.Is(err, models.ErrNotFound):
		return a.deadLink(c, rq, "/signup")
	case errors.Is(err, models.ErrConflict):
		a.log.Info("sign-up confirmation refused: the address has an account")
		return a.notice(c, rq, http.StatusConflict, views.PasswordNotice{
			Heading: "AlreadyAccountHeading",
			Lines:   []string{"AlreadyAccountLine"},
			LinkURL: a.base.URL("/reset"), LinkText: "ResetPasswordButton",
		})
	case err != nil:
		return a.tryLater(c, rq, "sign-up", err)
	}
	a.log.Info("signed up", "user", u.ID)
	d := a.passwordForm(c, rq, "", "")
	return a.notice(c, rq, http.StatusOK, views.PasswordNotice{
		Heading: "AccountReadyHeading",
		Lines:   []string{"AccountReadyLine"},
		LinkURL: d.SignInURL, LinkText: "SignInButton",
	})
}
