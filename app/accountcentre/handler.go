// Package accountcentre is the handler of the account page
// ({base}/account) and its JSON API, for teams that build their own:
// the user's sessions (list, end one, end the others), linked sign-in
// methods (list, link another, unlink one), the applications the user let
// sign them in (list, revoke one: the OpenID Provider's consents), the
// e-mail address (a change link to the new one) and deleting the account. The rules are in
// app/accounts; the sessions' records in each strategy (app/session).
package accountcentre

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/web"
)

// The routes (docs/account.md). GETs answer JSON; every POST checks CSRF
// and answers JSON when asked (json=true, or Accept: application/json),
// else sends the browser back to the page with a notice or an error.
const (
	page            = "/account"
	listSessions    = "/list-sessions"
	revokeSession   = "/revoke-session"
	revokeOthers    = "/revoke-other-sessions"
	listAccounts    = "/list-accounts"
	unlinkAccount   = "/unlink-account"
	linkAccount     = "/link-account"
	changeEmail     = "/change-email"
	deleteUser      = "/delete-user"
	listApps        = "/list-apps"
	revokeApp       = "/revoke-app"
	emailChangePage = "/account/email/confirm"
)

// Linker starts an OAuth sign-in (the OAuth flow's POST /signin/:provider):
// for a signed-in user the callback links the identity (signin.OAuth).
type Linker interface {
	SignIn(c echo.Context, rq *web.Request, p config.Provider) error
}

// Offers is what the page can show, from the configuration.
type Offers struct {
	// Linkable are the OAuth and OIDC providers, in config order.
	Linkable []config.Provider
	// Names are every provider's display name, by id.
	Names         map[string]string
	PasswordPage  string // "" when the password pages are off
	PasskeysPage  string // "" without a passkey provider
	TwoFactorPage string // "" when two-factor is off
	Mail          bool   // an e-mail provider can send the change link
	SelfDelete    bool
}

// TwoFactorState tells whether the user has two-factor on (nil: off).
type TwoFactorState func(ctx context.Context, userID string) (bool, error)

// Handler owns the account page's routes.
type Handler struct {
	kit       *web.Kit
	base      config.Base
	rules     *accounts.Service
	sessions  session.Strategy
	linker    Linker
	offers    Offers
	twoFactor TwoFactorState
	apps      Apps
	log       *slog.Logger
	now       func() time.Time
}

// Deps are what New builds the handler from.
type Deps struct {
	Kit       *web.Kit
	Rules     *accounts.Service
	Sessions  session.Strategy
	Linker    Linker
	Offers    Offers
	TwoFactor TwoFactorState
	Apps      Apps // nil: the OpenID Provider is off
	Log       *slog.Logger
	Now       func() time.Time
}

// New builds the handler.
func New(d Deps) *Handler {
	return &Handler{kit: d.Kit, base: d.Kit.Base(), rules: d.Rules, sessions: d.Sessions, linker: d.Linker, offers: d.Offers,
		twoFactor: d.TwoFactor, apps: d.Apps, log: d.Log, now: d.Now}
}

// Mount registers the routes.
func (h *Handler) Mount(m web.Mux) {
	m.Page(page, h.signedIn(h.getPage))
	m.Page(listSessions, h.signedInAPI(h.getSessions))
	m.Page(listAccounts, h.signedInAPI(h.getAccounts))
	retry := h.csrfRefused
	m.Post(revokeSession, h.signedIn(h.postRevokeSession), retry)
	m.Post(revokeOthers, h.signedIn(h.postRevokeOthers), retry)
	m.Post(unlinkAccount, h.signedIn(h.postUnlink), retry)
	m.Post(linkAccount, h.signedIn(h.postLink), retry)
	m.Post(changeEmail, h.signedIn(h.postChangeEmail), retry)
	m.Post(deleteUser, h.signedIn(h.postDelete), retry)
	if h.apps != nil {
		m.Page(listApps, h.signedInAPI(h.getApps))
		m.Post(revokeApp, h.signedIn(h.postRevokeApp), retry)
	}
	m.Page(emailChangePage, h.getEmailChange)
	m.Post(emailChangePage, h.postEmailChange, h.emailChangeRetry)
}

// csrfRefused answers a POST whose csrfToken does not match: the API gets
// 403 {"error": "MissingCSRF"} (Auth.js v5's name for it), the page's
// forms go back to the page with ?csrf=true, as next-auth's pages do.
func (h *Handler) csrfRefused(c echo.Context, rq *web.Request) error {
	if wantsJSON(c, rq) {
		web.NoStore(c)
		return c.JSON(http.StatusForbidden, map[string]string{"error": "MissingCSRF"})
	}
	return h.kit.RetryPage(page)(c, rq)
}

// browser is the request as the rules see it.
func (h *Handler) browser(c echo.Context) session.Browser {
	return session.Browser{Sessions: h.sessions, W: c.Response(), R: c.Request()}
}

// wantsJSON: the API's callers ask for JSON (the v4 client's json=true,
// or an Accept header naming it); the page's forms do not.
func wantsJSON(c echo.Context, rq *web.Request) bool {
	return rq.JSONMode || strings.Contains(c.Request().Header.Get(echo.HeaderAccept), echo.MIMEApplicationJSON)
}

// done answers a change: {"ok": true, ...} in JSON, else back to the page
// with a notice (a message id and its parameters).
func (h *Handler) done(c echo.Context, rq *web.Request, body map[string]any, notice string, kv ...string) error {
	if wantsJSON(c, rq) {
		if body == nil {
			body = map[string]any{}
		}
		body["ok"] = true
		web.NoStore(c)
		return c.JSON(http.StatusOK, body)
	}
	q := "?notice=" + notice
	for i := 0; i+1 < len(kv); i += 2 {
		q += "&" + kv[i] + "=" + kv[i+1]
	}
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(page)+q))
}
