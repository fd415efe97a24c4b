// Package accountpages is the handler of the account pages: password
// sign-up and reset, the signed-in password page, the passkeys page
// (list, rename, remove) and signing out everywhere. Their rules are in
// app/accounts; these handlers read the form, call the rules and answer.
package accountpages

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// The account pages of the credentials provider (docs/passwords-and-passkeys.md):
//
//	GET/POST {base}/signup            e-mail + password → a confirmation link by e-mail
//	GET/POST {base}/signup/verify     the link's page: the password again → the account exists
//	GET/POST {base}/reset             e-mail → a reset link by e-mail
//	GET/POST {base}/reset/confirm     the link's page: a new password → every session ends
//	GET/POST {base}/account/password  signed in: change it (current one asked), or add one by e-mail link
//
// and, with a webauthn provider, GET {base}/passkeys and POST
// {base}/passkeys/rename and /passkeys/remove; POST {base}/signout/all for
// everyone.
//
// Links are e-mail tokens as the magic links' (random, stored hashed,
// single use, short-lived, rows in verification_tokens), under identifiers
// and hashes of their own, so no link of one flow works in another or as a
// sign-in link. Opening a link changes nothing: its page's POST does.

// Offers is which account pages the configuration offers. Every route
// exists whatever the config; a page that is off answers like an unknown
// action.
type Offers struct {
	Passwords bool // a credentials provider is configured
	SignUp    bool // and its sign-up is on
	Mail      bool // an e-mail provider exists: sign-up, reset and adding a password need it
	// PasskeyProvider is the first webauthn provider's id, whose options
	// and callback the passkeys page uses; "" when none is configured.
	PasskeyProvider string
}

func (o Offers) signUpOff() bool { return !o.Passwords || !o.SignUp || !o.Mail }

func (o Offers) resetOff() bool { return !o.Passwords || !o.Mail }

// Handler owns the account pages' routes. It holds exactly what they use.
type Handler struct {
	kit    *web.Kit
	base   config.Base
	offers Offers
	// rules are the account rules (sign-up, reset, passwords, passkeys,
	// sign-out everywhere).
	rules    *accounts.Service
	sessions session.Strategy
	users    signedInUsers    // the session's user (web.Kit.RequireUser)
	metrics  *metrics.Metrics // sign-outs and sessions; nil: off
	log      *slog.Logger
}

// Deps are what the account pages use, built by the app's wiring.
type Deps struct {
	Kit      *web.Kit
	Offers   Offers
	Rules    *accounts.Service
	Sessions session.Strategy
	Metrics  *metrics.Metrics
	Log      *slog.Logger
}

// New builds the handler.
func New(d Deps) *Handler {
	return &Handler{kit: d.Kit, base: d.Kit.Base(), offers: d.Offers, rules: d.Rules, sessions: d.Sessions, users: signedInUsers{d.Sessions},
		metrics: d.Metrics, log: d.Log}
}

// OwnTextRoutes are the password pages, whose answer to a value that is
// not text (a NUL byte, invalid UTF-8: web.IsText) is their notice, as
// for any other bad value: a password that cannot be one (and a current
// password that cannot be right, counting nothing), an address that is
// not one, a dead link. Passwords and addresses are normalised and links'
// tokens hashed before anything reaches the database.
func OwnTextRoutes() []string {
	return []string{"/signup", "/signup/verify", "/reset", "/reset/confirm", accountPassword}
}

// Mount registers the account pages' routes.
func (h *Handler) Mount(m web.Mux) {
	m.Page("/signup", h.getSignUp, web.KeepOpener)
	m.Post("/signup", h.postSignUp, h.retryPasswordPage("/signup"), web.KeepOpener)
	m.Page("/signup/verify", h.getSignUpVerify)
	m.Post("/signup/verify", h.postSignUpVerify, h.signUpVerifyPage(http.StatusForbidden, msgExpired))
	m.Page("/reset", h.getReset, web.KeepOpener)
	m.Post("/reset", h.postReset, h.retryPasswordPage("/reset"), web.KeepOpener)
	m.Page("/reset/confirm", h.getResetConfirm)
	m.Post("/reset/confirm", h.postResetConfirm, h.resetConfirmPage(http.StatusForbidden, msgExpired))
	m.Page(accountPassword, h.passwordUser(h.getAccountPassword))
	m.Post(accountPassword, h.passwordUser(h.postAccountPassword), h.retryPasswordPage(accountPassword))
	m.Post("/signout/all", h.postSignOutEverywhere, h.kit.RetryPage("/signout"))
	m.Page(passkeysPage, h.kit.RequireUser(h.users, passkeysPage, h.getPasskeys), h.withPasskeys)
	m.Post("/passkeys/rename", h.kit.RequireUser(h.users, passkeysPage, h.postRenamePasskey), h.kit.RetryPage(passkeysPage), h.withPasskeys)
	m.Post("/passkeys/remove", h.postRemovePasskey, h.kit.RetryPage(passkeysPage), h.withPasskeys)
}

// browser is the request as the account rules see it.
func (h *Handler) browser(c echo.Context) session.Browser {
	return session.Browser{Sessions: h.sessions, W: c.Response(), R: c.Request(), Created: h.metrics.SessionCreated}
}

// signedInUsers reads a request's signed-in user from its session
// (web.UserReader).
type signedInUsers struct{ sessions session.Strategy }

func (s signedInUsers) SignedInUser(ctx context.Context, r *http.Request) (string, error) {
	return session.Browser{Sessions: s.sessions, R: r}.SignedInUser(ctx)
}

// Messages shown on the pages (message ids, views/locales); none says
// whether an address has an account.
const (
	msgExpired     = "RequestExpired"
	msgBadAddress  = "BadAddress"
	msgRateLimited = "RateLimited"
	msgDeadLink    = "DeadLink"
)

// retryPasswordPage is the CSRF answer of the form pages: back to the page
// with ?csrf=true, as the sign-in page.
func (h *Handler) retryPasswordPage(page string) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		return c.Redirect(http.StatusFound, h.kit.WithLang(c, rq, h.base.URL(page)+"?csrf=true"))
	}
}

// csrfMessage is the form pages' message after a CSRF retry.
func csrfMessage(c echo.Context) string {
	if c.QueryParam("csrf") == "true" {
		return msgExpired
	}
	return ""
}

// passwordForm is the data every password page starts from.
func (h *Handler) passwordForm(c echo.Context, rq *web.Request, title, action string) views.PasswordForm {
	return views.PasswordForm{
		Page:        h.kit.Page(c, rq, title),
		Action:      h.base.URL(action),
		CSRFToken:   rq.CSRFToken,
		CallbackURL: rq.CallbackURL,
		Host:        web.HostOf(h.base.Origin),
		SignInURL:   h.base.URL("/signin") + "?" + url.Values{"callbackUrl": {rq.CallbackURL}}.Encode(),
	}
}

// tell renders a page that only tells (a request taken, a password set).
func (h *Handler) tell(c echo.Context, rq *web.Request, status int, n views.PasswordNotice) error {
	n.Page = h.kit.Page(c, rq, n.Heading)
	return web.Render(c, status, views.PasswordNoticePage(n))
}

// notice is a refusal that only tells, answered by Kit.Fail.
func notice(status int, n views.PasswordNotice) error {
	return web.Notice(status, n, "", nil)
}

// deadLink is the answer to an unknown, spent or expired link, or a page
// whose flow is off.
func (h *Handler) deadLink(again string) error {
	return notice(http.StatusBadRequest, views.PasswordNotice{
		Heading: "DeadLinkHeading", Lines: []string{msgDeadLink},
		LinkURL: h.base.URL(again), LinkText: "StartAgain",
	})
}

// linkFailed answers a failed look-up of a link: dead (unknown, spent,
// expired) or the database failing.
func (h *Handler) linkFailed(err error, again string) error {
	if errors.Is(err, accounts.ErrDeadLink) {
		return h.deadLink(again)
	}
	return tryLater(again+" link", err)
}

// linkToken is the e-mailed link's token: posted with the page's form, or
// in the link's query.
func linkToken(c echo.Context, rq *web.Request) string {
	if t := rq.Form.Get("token"); t != "" {
		return t
	}
	return c.QueryParam("token")
}

// tryLater is the answer when the database or the mail server fails; the
// cause is logged once by Kit.Fail (never an address or a token).
func tryLater(what string, err error) error { return web.TryLater(what, err) }

// msgThrottled answers a password check the throttle refused.
const msgThrottled = "Throttled"

// policyStatus is the status of a refused new password: 400, or 429 with
// Retry-After when no hashing slot came free (password.ErrBusy, as the
// password sign-in's TryLater): the password was not refused, the
// request may be sent again.
func policyStatus(c echo.Context, err error) int {
	if errors.Is(err, password.ErrBusy) {
		web.SetRetryAfter(c)
		return http.StatusTooManyRequests
	}
	return http.StatusBadRequest
}

// policyMessage is the message id a refused password shows: the policy's
// own (a *password.Refusal) or a generic one.
func policyMessage(err error) string {
	var r *password.Refusal
	if errors.As(err, &r) {
		return r.ID()
	}
	if errors.Is(err, password.ErrBusy) {
		return "BusyNow"
	}
	return "PasswordRefused"
}
