package accountpages

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/web"
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

// getSignUp is the sign-up form.
func (h *Handler) getSignUp(c echo.Context, rq *web.Request) error {
	if h.offers.signUpOff() {
		return web.NotSupported
	}
	d := h.passwordForm(c, rq, "TitleSignUp", "/signup")
	d.Error = csrfMessage(c)
	return web.Render(c, http.StatusOK, views.SignUpPage(d))
}

// signUpForm shows the form again with a refusal.
func (h *Handler) signUpForm(c echo.Context, rq *web.Request, status int, addr, msg string) error {
	d := h.passwordForm(c, rq, "TitleSignUp", "/signup")
	d.Email, d.Error = addr, msg
	return web.Render(c, status, views.SignUpPage(d))
}

// postSignUp takes the form (accounts.Service.StartSignUp).
func (h *Handler) postSignUp(c echo.Context, rq *web.Request) error {
	if h.offers.signUpOff() {
		return web.NotSupported
	}
	addr, err := h.rules.StartSignUp(h.kit.MailContext(c, rq), accounts.SignUpRequest{
		Email: rq.Form.Get("email"), Password: rq.Form.Get("password"), ClientIP: c.RealIP(),
	})
	switch {
	case errors.Is(err, accounts.ErrBadAddress):
		return h.signUpForm(c, rq, http.StatusBadRequest, "", msgBadAddress)
	case errors.Is(err, accounts.ErrPolicy):
		return h.signUpForm(c, rq, policyStatus(c, err), addr, policyMessage(err))
	case errors.Is(err, accounts.ErrHookRefused):
		return h.signUpForm(c, rq, http.StatusBadRequest, addr, "SignUpRefused")
	case errors.Is(err, accounts.ErrRateLimited):
		return h.signUpForm(c, rq, http.StatusTooManyRequests, addr, msgRateLimited)
	case err != nil:
		return tryLater("sign-up", err)
	}
	return h.checkEmail(c, rq, "SignUpCheckEmail")
}

// checkEmail is the answer to every sign-up or reset request that was
// taken: it depends on nothing but the flow.
func (h *Handler) checkEmail(c echo.Context, rq *web.Request, line string) error {
	return h.tell(c, rq, http.StatusOK, views.PasswordNotice{Heading: "CheckEmailHeading", Lines: []string{line}})
}

// getSignUpVerify is the link's page; opening it spends nothing.
func (h *Handler) getSignUpVerify(c echo.Context, rq *web.Request) error {
	return h.signUpVerifyPage(http.StatusOK, "")(c, rq)
}

// signUpVerifyPage renders the link's page for the token in the query or
// the posted form, with a message.
func (h *Handler) signUpVerifyPage(status int, msg string) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		if h.offers.signUpOff() {
			return web.NotSupported
		}
		token := linkToken(c, rq)
		p, err := h.rules.PendingSignUp(c.Request().Context(), token)
		if err != nil {
			return h.linkFailed(err, "/signup")
		}
		d := h.passwordForm(c, rq, "TitleConfirmSignUp", "/signup/verify")
		d.Email, d.Token, d.Error = p.Email, token, msg
		return web.Render(c, status, views.ConfirmSignUpPage(d))
	}
}

// postSignUpVerify creates the account when the password typed is the one
// chosen at sign-up: the user, verified, with that password, in one
// transaction that spends the link and every other pending sign-up of the
// address. An address that got an account meanwhile keeps it unchanged.
func (h *Handler) postSignUpVerify(c echo.Context, rq *web.Request) error {
	if h.offers.signUpOff() {
		return web.NotSupported
	}
	_, err := h.rules.CompleteSignUp(c.Request().Context(), rq.Form.Get("token"), rq.Form.Get("password"), c.RealIP())
	switch {
	case errors.Is(err, accounts.ErrThrottled):
		return h.signUpVerifyPage(http.StatusTooManyRequests, msgThrottled)(c, rq)
	case errors.Is(err, accounts.ErrWrongPassword):
		return h.signUpVerifyPage(http.StatusBadRequest, "SignUpWrongPassword")(c, rq)
	case errors.Is(err, accounts.ErrHookRefused): // the rules changed since the link was sent
		return h.signUpVerifyPage(http.StatusBadRequest, "SignUpRefused")(c, rq)
	case errors.Is(err, accounts.ErrAccountExists):
		return notice(http.StatusConflict, views.PasswordNotice{
			Heading: "AlreadyAccountHeading",
			Lines:   []string{"AlreadyAccountLine"},
			LinkURL: h.base.URL("/reset"), LinkText: "ResetPasswordButton",
		})
	case err != nil:
		return h.linkFailed(err, "/signup")
	}
	d := h.passwordForm(c, rq, "", "")
	return h.tell(c, rq, http.StatusOK, views.PasswordNotice{
		Heading: "AccountReadyHeading",
		Lines:   []string{"AccountReadyLine"},
		LinkURL: d.SignInURL, LinkText: "SignInButton",
	})
}
