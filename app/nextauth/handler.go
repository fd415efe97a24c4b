// Package nextauth is the NextAuth.js REST API and its built-in pages:
// GET /csrf, /providers, /session (and its POST update), the sign-in,
// sign-out, error and verify-request pages, POST /signin/:provider and the
// callbacks (dispatched to each provider type's Flow), POST /signout and
// the v4 client's log beacon. The rules are in the core (app/signin); the
// flows of OAuth, e-mail links and passkeys are handlers of their own
// (app/oauthflow, app/emailflow, app/passkeyflow); the password sign-in is
// here (credentials.go).
package nextauth

import (
	"context"
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// Handler owns the NextAuth.js routes below the base path.
type Handler struct {
	kit       *web.Kit
	base      config.Base
	log       *slog.Logger
	core      *signin.Service
	sessions  session.Strategy
	hooks     signin.Hooks // the JWT and Session hooks of GET /session
	providers *providerSet
	flows     map[string]Flow
	// credentials is what the password rules need of a credentials
	// provider (the instance's one hasher, the throttle's counters).
	credentials    func(config.Provider) signin.CredentialsProvider
	formPostBounce echo.MiddlewareFunc // OAuth's cross-site form_post callback (oauthflow)
	metrics        *metrics.Metrics
	pages          config.Pages
	passkeys       bool // a passkey provider exists: the sign-in page loads its script
	sendsMail      bool // an e-mail provider exists: the password form links sign-up and reset
	reportsOIDC    bool // Auth.js v5's /providers lists "oidc"; v4 knows only "oauth"
	tokenErrors    TokenErrors
}

// TokenErrors tells GET /session that one of the user's provider accounts
// needs a new sign-in (providertokens.Service.SessionError): its `error`.
type TokenErrors interface {
	SessionError(ctx context.Context, userID string) (string, error)
}

// Deps are what New builds the handler from.
type Deps struct {
	Kit       *web.Kit
	Log       *slog.Logger
	Core      *signin.Service
	Sessions  session.Strategy
	Hooks     signin.Hooks
	Providers []config.Provider // in config order
	// Flows are the sign-in flows by provider type; a type without one
	// (oauth, oidc) takes config.TypeOAuth's.
	Flows          map[string]Flow
	Credentials    func(config.Provider) signin.CredentialsProvider
	FormPostBounce echo.MiddlewareFunc
	Metrics        *metrics.Metrics
	Pages          config.Pages
	Passkeys       bool
	SendsMail      bool
	ReportsOIDC    bool
	// TokenErrors: nil when no provider keeps tokens (no lookup then).
	TokenErrors TokenErrors
}

// New builds the handler and renders the /providers body once.
func New(d Deps) (*Handler, error) {
	h := &Handler{
		kit: d.Kit, base: d.Kit.Base(), log: d.Log, core: d.Core, sessions: d.Sessions, hooks: d.Hooks,
		credentials: d.Credentials, formPostBounce: d.FormPostBounce, metrics: d.Metrics, pages: d.Pages,
		passkeys: d.Passkeys, sendsMail: d.SendsMail, reportsOIDC: d.ReportsOIDC,
		tokenErrors: d.TokenErrors,
	}
	h.flows = map[string]Flow{config.TypeCredentials: credentialsFlow{h}}
	for t, f := range d.Flows {
		h.flows[t] = f
	}
	var err error
	if h.providers, err = h.buildProviders(d.Providers); err != nil {
		return nil, err
	}
	return h, nil
}

// OwnTextRoutes are the routes whose answer to a value that is not text
// (a NUL byte, invalid UTF-8: web.IsText) stays next-auth's: a bad address
// or password is CredentialsSignin, a bad e-mail token Verification, a bad
// callbackUrl the origin, as for any other value these routes refuse. None
// lets such a value reach the database (TestBadTextIsRefusedAtTheEdge).
func OwnTextRoutes() []string {
	return []string{"/csrf", "/session", "/signin", "/signin/:provider", "/callback/:provider", "/signout", "/error", "/verify-request"}
}

// Mount registers the routes. Each POST names its answer to a csrfToken
// that does not match the cookie (next-auth's differ per route).
func (h *Handler) Mount(m web.Mux) {
	m.Page("/csrf", h.getCSRF)
	m.Get("/providers", h.getProviders) // next-auth sets no cookies here
	m.Page("/session", h.getSession)
	m.Post("/session", h.postSession, h.emptySessionBadRequest)
	m.Page("/signin", h.getSignIn, web.KeepOpener)
	m.Page("/signin/:provider", h.getSignIn, web.KeepOpener) // v4 quirk: the provider segment is ignored
	m.Post("/signin/:provider", h.postSignIn, h.kit.RetryPage("/signin"), web.KeepOpener)
	m.Page("/callback/:provider", h.callback, web.KeepOpener, h.knownProvider)
	m.Post("/callback/:provider", h.callback, h.callbackWithoutCSRF, web.KeepOpener, h.knownProvider, h.formPostBounce)
	m.Page("/signout", h.getSignOut, web.KeepOpener)
	m.Post("/signout", h.postSignOut, h.kit.RetryPage("/signout"), web.KeepOpener)
	m.Page("/error", h.getError, web.KeepOpener)
	m.Page("/verify-request", h.getVerifyRequest, web.KeepOpener)
	// The v4 client's log beacon: no CSRF, no init, nothing changes.
	m.PostWithoutCSRF("/_log", h.postLog)
}

// CountFailedSignIn is the kit's OnFailure (countFailedSignIn).
func (h *Handler) CountFailedSignIn(c echo.Context, code signin.Code) { h.countFailedSignIn(c, code) }

// browser is the request as the sign-in core sees it (signin.Browser).
func (h *Handler) browser(c echo.Context) session.Browser {
	return session.Browser{Sessions: h.sessions, W: c.Response(), R: c.Request(), Created: h.metrics.SessionCreated}
}

// wireType is the provider type GET /providers reports.
func (h *Handler) wireType(t string) string {
	if t == config.TypeOIDC && !h.reportsOIDC {
		return config.TypeOAuth
	}
	if t == config.TypeTwoFactor { // its code is posted as a password is
		return config.TypeCredentials
	}
	return t
}
