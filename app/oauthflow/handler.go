// Package oauthflow is the OAuth 2.0 and OpenID Connect sign-in: POST
// /signin/:provider sends the browser to the identity provider with a state
// bound to its CSRF token and an attempt sealed in the check cookie (PKCE
// and nonce on top); GET and POST /callback/:provider spend that attempt,
// check it, exchange the code and hand the identity to the sign-in core,
// which owns the linking rules and the session.
package oauthflow

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// Core is the sign-in rule this flow ends in (signin.Service.OAuth):
// linking the identity to a user and starting the session.
type Core interface {
	OAuth(ctx context.Context, b signin.Browser, in signin.OAuthIdentity) (*signin.SignedIn, error)
}

// Tokens keeps the tokens of a sign-in with a provider that has
// store_tokens (providertokens.Service.Keep; nothing for the others).
type Tokens interface {
	Keep(ctx context.Context, provider, providerAccountID string, tok *oauth2.Token, idToken string) error
}

// LinkNotice tells the user's verified address that an identity at p was
// linked to the account (the account rules' TellMethodAdded); it reports
// failures itself.
type LinkNotice func(ctx context.Context, u *models.User, p config.Provider)

// Deps are what the flow is built from: the config's providers and the
// parts of the service it uses.
type Deps struct {
	Providers []config.Provider // every provider, in the config's order
	Base      config.Base
	Secrets   []string // the first seals the check cookie, any opens it
	// CheckCookie and CSRFCookie are the cookie names (cookies.Names).
	CheckCookie, CSRFCookie string
	Cookies                 cookies.Writer
	MaxBodyBytes            int64
	// HTTPClient makes every call to the identity providers.
	HTTPClient *http.Client
	Kit        *web.Kit
	Core       Core
	// Browser is the request as the core sees it.
	Browser    func(c echo.Context) session.Browser
	LinkNotice LinkNotice
	// Tokens keeps provider tokens after a sign-in; nil: none kept.
	Tokens Tokens
	Now    func() time.Time
	Log    *slog.Logger
}

// Handler is the OAuth and OIDC flow (the dispatcher's flow interface).
type Handler struct {
	clients      map[string]oauth.Client // by provider id: the OAuth and OIDC providers
	order        []string                // their ids, in the config's order
	checks       *checkCookies
	csrfCookie   string
	base         config.Base
	maxBodyBytes int64
	kit          *web.Kit
	core         Core
	browser      func(c echo.Context) session.Browser
	linkNotice   LinkNotice
	tokens       Tokens
	now          func() time.Time
	log          *slog.Logger
}

// New builds a client for every OAuth and OIDC provider (OIDC discovery
// waits for Discover or the first sign-in) and the check cookie's keys.
func New(d Deps) (*Handler, error) {
	clients, order, err := buildClients(d.Providers, d.Base, d.HTTPClient)
	if err != nil {
		return nil, err
	}
	checks, err := newCheckCookies(d.Secrets, d.CheckCookie, d.Base.Path, d.Cookies)
	if err != nil {
		return nil, err
	}
	return &Handler{
		clients: clients, order: order, checks: checks, csrfCookie: d.CSRFCookie, base: d.Base,
		maxBodyBytes: d.MaxBodyBytes, kit: d.Kit, core: d.Core, browser: d.Browser, linkNotice: d.LinkNotice,
		tokens: d.Tokens, now: d.Now, log: d.Log,
	}, nil
}

// CallbackWithoutCSRF is Callback: a callback posted by the IdP
// (response_mode=form_post) carries no csrfToken; its state, a hash of the
// CSRF token, is checked instead.
func (h *Handler) CallbackWithoutCSRF(c echo.Context, rq *web.Request, p config.Provider) error {
	return h.Callback(c, rq, p)
}

// signInDestinations is how an OAuth client says where its sign-in redirect
// may send the browser (app/oauth).
type signInDestinations interface {
	SignInURLs() (urls []string, final bool)
}

// SignInURLs are where the providers' sign-in redirects may send the
// browser, in the config's order, for the pages' form-action; final is
// false while an OIDC provider's discovery has yet to run (the list may
// still grow).
func (h *Handler) SignInURLs() (urls []string, final bool) {
	final = true
	for _, id := range h.order {
		d, ok := h.clients[id].(signInDestinations)
		if !ok {
			continue
		}
		u, done := d.SignInURLs()
		final = final && done
		urls = append(urls, u...)
	}
	return urls, final
}

// discoverer is an OAuth client that can look up its endpoints ahead of
// the first sign-in (generic OIDC).
type discoverer interface {
	Discover(ctx context.Context) error
}

// Discover runs OIDC discovery once at start-up, so the sign-in page's
// form-action names the authorization endpoints before anyone signs in. An
// IdP that is down changes nothing: the first sign-in discovers it.
func (h *Handler) Discover(ctx context.Context) {
	for _, id := range h.order {
		d, ok := h.clients[id].(discoverer)
		if !ok {
			continue
		}
		if err := d.Discover(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("OIDC discovery at start-up failed; retried at the first sign-in", "provider", id, "err", err)
		}
	}
}

// Refresh spends a refresh token at provider's token endpoint, for the
// provider tokens' rules (providertokens.Refresher).
func (h *Handler) Refresh(ctx context.Context, provider, refreshToken string) (*oauth2.Token, error) {
	c, ok := h.clients[provider]
	if !ok {
		return nil, fmt.Errorf("refresh: %q is not an OAuth or OIDC provider", provider)
	}
	return c.Refresh(ctx, refreshToken)
}
