package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"runtime"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/emailflow"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// The account pages of the credentials provider (README "Passwords"):
//
//	GET/POST {base}/signup            e-mail + password → a confirmation link by e-mail
//	GET/POST {base}/signup/verify     the link's page: the password again → the account exists
//	GET/POST {base}/reset             e-mail → a reset link by e-mail
//	GET/POST {base}/reset/confirm     the link's page: a new password → every session ends
//	GET/POST {base}/account/password  signed in: change it (current one asked), or add one by e-mail link
//
// Links are e-mail tokens as the magic links' (random, stored hashed,
// single use, short-lived, rows in verification_tokens), under identifiers
// and hashes of their own, so no link of one flow works in another or as a
// sign-in link. Opening a link changes nothing: its page's POST does. The
// rules live in app/accounts; these handlers read the form and answer.

// Link lifetimes (accounts.SignUpLinkMaxAge, accounts.ResetLinkMaxAge; the
// reset messages in views/locales say "30 minutes": change both).
const (
	signUpLinkMaxAge = accounts.SignUpLinkMaxAge
	resetLinkMaxAge  = accounts.ResetLinkMaxAge
)

// passwordFlows is what the account pages need, built once by New.
type passwordFlows struct {
	enabled bool   // a credentials provider is configured
	id      string // its id, as the SignIn hook sees it
	signUp  bool   // and its sign-up is on
	mail    accountMailer
	canMail bool // an e-mail provider exists: sign-up, reset and adding a password need it
	hasher  *password.Hasher
	// rules are the account rules (sign-up, reset, passwords, passkeys,
	// sign-out everywhere), over the store.
	rules *accounts.Service
}

// buildPasswordFlows prepares the account pages from the config; core is
// the sign-in core the account rules use, emails the e-mail flow (whose
// first provider's server sends the account e-mails).
func (a *App) buildPasswordFlows(core accounts.Core, emails *emailflow.Handler) *passwordFlows {
	// One hasher for every password check of this instance, so that its
	// bound on concurrent Argon2id runs (19 MiB each) holds for all of them.
	hasher := password.Default().Limit(2*runtime.GOMAXPROCS(0), 2*time.Second)
	f := &passwordFlows{hasher: hasher}
	f.mail, f.canMail = newAccountMailer(emails)
	p, ok := a.cfg.Credentials()
	f.enabled, f.id, f.signUp = ok, p.ID, ok && p.SignupEnabled()
	f.rules = &accounts.Service{
		Store:    a.store,
		Core:     core,
		Hooks:    a.hooks,
		Provider: p.ID,
		Offered:  accounts.Offered{Passwords: ok, Email: emails.Offered(), Passkeys: len(a.passkeys.rps) > 0},
		Hasher:   hasher,
		Policy:   password.NewPolicy(),
		// Wrong passwords typed on the account pages count in the password
		// sign-in's buckets: guessing there is guessing at sign-in.
		Throttle:      signin.NewThrottle(a.store),
		Limits:        f.mail.limits,
		Hashes:        func(v string) []string { return email.HashTokens(v, a.cfg.Secrets()) },
		SessionsEnded: a.sessionsEnded,
		Now:           a.now,
		Log:           a.log,
	}
	if f.canMail {
		f.rules.Mail = accountMails{a}
	}
	return f
}

// useHasher replaces the hasher of every password check (tests).
func (f *passwordFlows) useHasher(h *password.Hasher) {
	f.hasher, f.rules.Hasher = h, h
}

// passwordRoutes registers the account pages. Every route exists whatever
// the config; a page that is off answers like an unknown action.
func (a *App) passwordRoutes(m web.Mux) {
	m.Page("/signup", a.getSignUp)
	m.Post("/signup", a.postSignUp, a.retryPasswordPage("/signup"))
	m.Page("/signup/verify", a.getSignUpVerify)
	m.Post("/signup/verify", a.postSignUpVerify, a.signUpVerifyPage(http.StatusForbidden, msgExpired))
	m.Page("/reset", a.getReset)
	m.Post("/reset", a.postReset, a.retryPasswordPage("/reset"))
	m.Page("/reset/confirm", a.getResetConfirm)
	m.Post("/reset/confirm", a.postResetConfirm, a.resetConfirmPage(http.StatusForbidden, msgExpired))
	m.Page("/account/password", a.getAccountPassword)
	m.Post("/account/password", a.postAccountPassword, a.retryPasswordPage("/account/password"))
}

// Messages shown on the pages (message ids, views/locales); none says
// whether an address has an account.
const (
	msgExpired     = "RequestExpired"
	msgBadAddress  = "BadAddress"
	msgRateLimited = "RateLimited"
	msgDeadLink    = "DeadLink"
	msgTryLater    = "TryLater"
)

// retryPasswordPage is the CSRF answer of the form pages: back to the page
// with ?csrf=true, as the sign-in page.
func (a *App) retryPasswordPage(page string) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		return c.Redirect(http.StatusFound, a.kit.WithLang(c, rq, a.base.URL(page)+"?csrf=true"))
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
func (a *App) passwordForm(c echo.Context, rq *web.Request, title, action string) views.PasswordForm {
	return views.PasswordForm{
		Page:        a.kit.Page(c, rq, title),
		Action:      a.base.URL(action),
		CSRFToken:   rq.CSRFToken,
		CallbackURL: rq.CallbackURL,
		Host:        web.HostOf(a.base.Origin),
		SignInURL:   a.base.URL("/signin") + "?" + url.Values{"callbackUrl": {rq.CallbackURL}}.Encode(),
	}
}

// notice renders a page that only tells.
func (a *App) notice(c echo.Context, rq *web.Request, status int, n views.PasswordNotice) error {
	if n.Page.Title == "" {
		n.Page = a.kit.Page(c, rq, n.Heading)
	}
	return web.Render(c, status, views.PasswordNoticePage(n))
}

// deadLink is the answer to an unknown, spent or expired link, or a page
// whose flow is off.
func (a *App) deadLink(c echo.Context, rq *web.Request, again string) error {
	return a.notice(c, rq, http.StatusBadRequest, views.PasswordNotice{
		Heading: "DeadLinkHeading", Lines: []string{msgDeadLink},
		LinkURL: a.base.URL(again), LinkText: "StartAgain",
	})
}

// linkFailed answers a failed look-up of a link: dead (unknown, spent,
// expired) or the database failing.
func (a *App) linkFailed(c echo.Context, rq *web.Request, err error, again string) error {
	if errors.Is(err, accounts.ErrDeadLink) {
		return a.deadLink(c, rq, again)
	}
	return a.tryLater(c, rq, again+" link", err)
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
// cause is logged (never an address or a token).
func (a *App) tryLater(c echo.Context, rq *web.Request, what string, err error) error {
	a.log.Error("password flow failed", "step", what, "err", err)
	return a.notice(c, rq, http.StatusServiceUnavailable, views.PasswordNotice{Heading: "TryLaterHeading", Lines: []string{msgTryLater}})
}

// sessionsEnded waits, after every session of a user signed in up to at
// was revoked, until the second after at has begun: a session remembers
// its sign-in in whole seconds and the revocation ends the whole second
// (models.RevokeSessions), so a sign-in that follows at once would
// otherwise be ended too. It first reloads this instance's copy of the
// revocations, so they apply here at once; other instances follow within
// session.revocation_poll.
func (a *App) sessionsEnded(ctx context.Context, at time.Time) {
	if err := a.loadRevocations(ctx); err != nil {
		a.log.Warn("session revocations not reloaded; the poll will", "err", err)
	}
	wait := at.Truncate(time.Second).Add(time.Second).Sub(at)
	if at.Equal(at.Truncate(time.Second)) {
		return
	}
	select {
	case <-time.After(min(wait, time.Second)):
	case <-ctx.Done():
	}
}

// msgThrottled answers a password check the throttle refused.
const msgThrottled = "Throttled"

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
