// Package twofactorpages is the handler of the second factor: the
// second-step page and the `two-factor` provider's callback (the code
// after a first factor, or a step-up of the signed-in session), and the
// account's two-factor page (enrolment with a QR code, recovery codes,
// turning it off). The rules are in app/twofactor and app/signin; this
// reads the forms, calls them and answers.
package twofactorpages

import (
	"context"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// The routes (docs/two-factor.md):
//
//	GET  {base}/two-factor                          the second-step page (or a step-up)
//	POST {base}/callback/two-factor                 the code: a session (the nextauth Flow below)
//	POST {base}/signin/two-factor                   to the page (as credentials' sign-in)
//	GET  {base}/account/two-factor                  enrolment, or the settings when on
//	POST {base}/account/two-factor/enable           confirm the enrolment with a code
//	POST {base}/account/two-factor/recovery-codes   a new set of recovery codes
//	POST {base}/account/two-factor/disable          off, with a code or a recovery code
const (
	stepPage     = "/two-factor"
	settingsPage = "/account/two-factor"
	enablePath   = "/account/two-factor/enable"
	codesPath    = "/account/two-factor/recovery-codes"
	disablePath  = "/account/two-factor/disable"
)

// Core is what the handler uses of the sign-in core: the second step and
// the step-up finish a sign-in (*signin.Service).
type Core interface {
	SecondStep(ctx context.Context, b signin.Browser, cookie, code string, remember bool) (*signin.SignedIn, error)
	EnrolAndSignIn(ctx context.Context, b signin.Browser, cookie, code string) (*signin.SignedIn, []string, error)
	StepUp(ctx context.Context, b signin.Browser, code string, remember bool) (*signin.SignedIn, error)
}

// Accounts is what the handler uses of the account rules: the user, and
// the notices to their address (*accounts.Service).
type Accounts interface {
	SignedInUser(ctx context.Context, id string) (*models.User, error)
	TellTwoFactor(ctx context.Context, u *models.User, event accounts.TwoFactorEvent, left int)
}

// Handler owns the two-factor routes. It holds exactly what they use.
type Handler struct {
	kit      *web.Kit
	base     config.Base
	core     Core
	rules    *twofactor.Service
	accounts Accounts
	sessions session.Strategy
	// remember is two_factor.remember_device (0: not offered).
	remember time.Duration
	// reauth is how recently a user must have signed in to change
	// two-factor (passkey.ReauthWindow, as adding a passkey).
	reauth  time.Duration
	metrics *metrics.Metrics
	log     *slog.Logger
	now     func() time.Time
}

// Deps are what New builds the handler from.
type Deps struct {
	Kit      *web.Kit
	Core     Core
	Rules    *twofactor.Service
	Accounts Accounts
	Sessions session.Strategy
	Remember time.Duration
	Reauth   time.Duration
	Metrics  *metrics.Metrics
	Log      *slog.Logger
	Now      func() time.Time
}

// New builds the handler.
func New(d Deps) *Handler {
	return &Handler{kit: d.Kit, base: d.Kit.Base(), core: d.Core, rules: d.Rules, accounts: d.Accounts, sessions: d.Sessions,
		remember: d.Remember, reauth: d.Reauth, metrics: d.Metrics, log: d.Log, now: d.Now}
}

// Mount registers the routes; the callback is the Flow (flow.go), which
// the NextAuth handler dispatches to.
func (h *Handler) Mount(m web.Mux) {
	m.Page(stepPage, h.getStep, web.KeepOpener)
	m.Page(settingsPage, h.withWho(h.getSettings))
	m.Post(enablePath, h.withWho(h.postEnable), h.kit.RetryPage(settingsPage))
	m.Post(codesPath, h.provenUser(h.postRecoveryCodes), h.kit.RetryPage(settingsPage))
	m.Post(disablePath, h.recentUser(h.postDisable), h.kit.RetryPage(settingsPage))
}

// browser is the request as the sign-in core sees it.
func (h *Handler) browser(c echo.Context) session.Browser {
	return session.Browser{Sessions: h.sessions, W: c.Response(), R: c.Request(), Created: h.metrics.SessionCreated}
}

// stepOf is the request's pending second-step cookie ("" when none).
func (h *Handler) stepOf(c echo.Context) string {
	return h.kit.SecondStep(c)
}
