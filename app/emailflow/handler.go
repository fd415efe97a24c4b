// Package emailflow is the e-mail link sign-in: POST /signin/:provider
// mails a link (the core's SendLink) and binds it to the browser that asked;
// GET /callback/:provider opens it (at once in that browser, through a
// confirm page anywhere else) and the confirm page's POST redeems it.
package emailflow

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// msgExpired is the confirm page's message when its POST failed the CSRF
// check (views/locales).
const msgExpired = "RequestExpired"

// Core is the e-mailed link's rules (signin.Service): sending a link,
// opening and redeeming it, looking it up without spending it.
type Core interface {
	SendLink(ctx context.Context, p signin.EmailProvider, in signin.LinkRequest) (*signin.SentLink, error)
	OpenLink(ctx context.Context, b signin.Browser, in signin.OpenedLink) (*signin.SignedIn, *signin.PendingLink, error)
	RedeemLink(ctx context.Context, b signin.Browser, provider, token, addr string) (*signin.SignedIn, error)
	LookUpLink(ctx context.Context, token string) (*signin.PendingLink, error)
}

// Deps are what the flow is built from: the config's providers and the
// parts of the service it uses.
type Deps struct {
	Providers []config.Provider // every provider, in the config's order
	Base      config.Base
	Secrets   []string // the first seals the binding cookie, any opens it
	// CookiePrefix is the cookie dialect's prefix ("next-auth", "authjs").
	CookiePrefix string
	// Counter keeps the rate limits' buckets (the database).
	Counter email.Counter
	// Colors are the theme's, for the e-mail; Lang is the e-mail's
	// language when the request names none (the configured default).
	Colors  views.EmailColors
	Lang    *i18n.Lang
	Metrics *metrics.Metrics // nil: metrics are off
	Kit     *web.Kit
	Core    Core
	// Browser is the request as the core sees it.
	Browser func(c echo.Context) session.Browser
	Now     func() time.Time
	Log     *slog.Logger
}

// Handler is the e-mail link flow (the dispatcher's flow interface).
type Handler struct {
	providers map[string]signin.EmailProvider // by provider id
	order     []string                        // their ids, in the config's order
	bindings  *linkBindings                   // e-mail links bound to the browser that asked
	base      config.Base
	kit       *web.Kit
	core      Core
	browser   func(c echo.Context) session.Browser
	now       func() time.Time
	log       *slog.Logger
}

// New prepares every e-mail provider (its server, link lifetime and rate
// limits) and the binding cookie's keys, once.
func New(d Deps) (*Handler, error) {
	h := &Handler{base: d.Base, kit: d.Kit, core: d.Core, browser: d.Browser, now: d.Now, log: d.Log}
	var err error
	if h.providers, h.order, err = buildProviders(d); err != nil {
		return nil, err
	}
	if h.bindings, err = newLinkBindings(d, h.providers); err != nil {
		return nil, err
	}
	return h, nil
}

// CallbackWithoutCSRF shows a link's confirm page again, with a 403 and
// the "expired" message, when its POST's csrfToken did not match.
func (h *Handler) CallbackWithoutCSRF(c echo.Context, rq *web.Request, p config.Provider) error {
	return h.confirmPage(c, rq, p, rq.Form, http.StatusForbidden, msgExpired)
}

// Offered reports whether an e-mail provider is configured: then every
// user with an address can sign in by a link.
func (h *Handler) Offered() bool { return len(h.providers) > 0 }

// BindingCookie is the binding cookie's name (the OpenAPI document).
func (h *Handler) BindingCookie() string { return h.bindings.name }

// AccountMailer is the first e-mail provider's mailer and rate limits:
// the account pages' e-mails go through its server and count against its
// limits, so an inbox has one budget. ok is false without an e-mail
// provider.
func (h *Handler) AccountMailer() (m Mailer, limits signin.Limiter, ok bool) {
	for _, id := range h.order {
		ep := h.providers[id]
		if m, isMailer := ep.Mailer.(Mailer); isMailer {
			return m, ep.Limits, true
		}
	}
	return Mailer{}, nil, false
}
