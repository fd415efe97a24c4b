// Package tokenapi is GET {base}/token/:provider: the signed-in user's
// access token at a provider with store_tokens, for the app's backend
// (docs/provider-tokens.md). The rules — sealing, refreshing once across
// instances — are app/providertokens'; this handler decides who may ask
// and maps the answers.
//
// Backend only. A provider access token in a browser is one XSS away from
// an attacker calling GitHub or Google as the user, so the endpoint serves
// only requests that carry `Authorization: Bearer <tokens.client_secret>`
// or whose peer is one of trusted_proxies (the app's backend behind the
// same proxy), and never a request whose Origin is not the service's or
// an allowed_redirect_origins one:
//
//	200  {"access_token","token_type","expires_at","scope"}
//	401  {"error":"SessionRequired"}          no session
//	401  {"error":"RefreshAccessTokenError"}  the provider refused the refresh token: sign in again
//	403  {"error":"AccessDenied"}             not the backend, a wrong client secret or a refused Origin
//	404  {"error":"TokensNotStored"}          provider without store_tokens, or no token kept for the user
//	502  {"error":"ProviderUnavailable"}      the provider's token endpoint failed; try again
//	503  {"error":"TryLater"}                 the database failed, or another refresh held on too long
package tokenapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/providertokens"
	"github.com/latchkey-auth/latchkey/app/proxies"
	"github.com/latchkey-auth/latchkey/app/redirect"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/web"
)

// Sessions is the read half of GET /session (the NextAuth handler's
// SignedIn): the request's session, writing nothing; nil when none.
type Sessions interface {
	SignedIn(ctx context.Context, r *http.Request) (*session.Session, error)
}

// Tokens are the provider-token rules (providertokens.Service).
type Tokens interface {
	Token(ctx context.Context, userID, provider string) (providertokens.Token, error)
}

// Handler owns GET {base}/token/:provider.
type Handler struct {
	sessions Sessions
	tokens   Tokens
	// secret is tokens.client_secret; nil: none configured.
	secret  []byte
	proxies proxies.Trusted
	origins redirect.Policy
	log     *slog.Logger
}

// New builds the handler; clientSecret "" admits trusted proxies only.
func New(sessions Sessions, tokens Tokens, clientSecret string, trusted proxies.Trusted, origins redirect.Policy, log *slog.Logger) *Handler {
	h := &Handler{sessions: sessions, tokens: tokens, proxies: trusted, origins: origins, log: log}
	if clientSecret != "" {
		h.secret = []byte(clientSecret)
	}
	return h
}

// Mount adds the route.
func (h *Handler) Mount(m web.Mux) { m.Get("/token/:provider", h.token) }

// answer is the 200 body.
type answer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	// ExpiresAt is epoch seconds; null when the provider gave no expiry.
	ExpiresAt *int64 `json:"expires_at"`
	Scope     string `json:"scope"`
}

func (h *Handler) token(c echo.Context) error {
	web.NoStore(c)
	r := c.Request()
	if why := h.refusal(r); why != "" {
		h.log.Info("token request refused", "reason", why, "request_id", web.RequestID(c))
		return fail(c, http.StatusForbidden, "AccessDenied")
	}
	s, err := h.sessions.SignedIn(r.Context(), r)
	if err != nil {
		logs.RequestFailed(h.log, slog.LevelWarn, err, "token request: session lookup failed", "err", err, "request_id", web.RequestID(c))
		web.SetRetryAfter(c)
		return fail(c, http.StatusServiceUnavailable, "TryLater")
	}
	if s == nil {
		return fail(c, http.StatusUnauthorized, "SessionRequired")
	}
	provider := c.Param("provider")
	t, err := h.tokens.Token(r.Context(), s.User.ID, provider)
	switch {
	case err == nil:
		out := answer{AccessToken: t.AccessToken, TokenType: t.TokenType, Scope: t.Scope}
		if t.ExpiresAt != 0 {
			out.ExpiresAt = &t.ExpiresAt
		}
		return c.JSON(http.StatusOK, out)
	case errors.Is(err, providertokens.ErrNotStored):
		return fail(c, http.StatusNotFound, "TokensNotStored")
	case errors.Is(err, providertokens.ErrRefreshFailed):
		return fail(c, http.StatusUnauthorized, providertokens.RefreshError)
	case errors.Is(err, providertokens.ErrProviderDown):
		logs.RequestFailed(h.log, slog.LevelWarn, err, "token refresh failed", "provider", provider, "err", err, "request_id", web.RequestID(c))
		return fail(c, http.StatusBadGateway, "ProviderUnavailable")
	default:
		logs.RequestFailed(h.log, slog.LevelWarn, err, "token request failed", "provider", provider, "err", err, "request_id", web.RequestID(c))
		web.SetRetryAfter(c)
		return fail(c, http.StatusServiceUnavailable, "TryLater")
	}
}

// refusal says why r may not have a token ("" when it may): a browser's
// Origin that is not the service's or an allowed one, a wrong client
// secret, or neither the secret nor a trusted proxy's address — the
// backend's own request, not one a proxy forwarded nor a browser's (see
// forwardedOrBrowser).
func (h *Handler) refusal(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		if _, ok := h.origins.Resolve(o + "/"); !ok {
			return "origin not allowed"
		}
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		if h.secret == nil || subtle.ConstantTimeCompare([]byte(bearer), h.secret) != 1 {
			return "wrong client secret"
		}
		return ""
	}
	if h.proxies.Peer(r.RemoteAddr) {
		if forwardedOrBrowser(r) {
			return "a trusted proxy's peer, but a forwarded or a browser's request"
		}
		return ""
	}
	return "neither the client secret nor a trusted proxy"
}

// forwardedOrBrowser reports whether r, from a trusted peer, is a request
// that peer forwarded (X-Forwarded-For, Forwarded, X-Real-IP) or a browser's (any
// Sec-Fetch-* header, which every current browser sends and scripts
// cannot remove). latchkey behind an ingress listed in trusted_proxies
// sees every browser's request from that peer, and a same-origin fetch
// carries no Origin: without this, a script on the app's origin (one
// XSS) read the user's provider token. A backend reaching latchkey
// through such a proxy sends the client secret instead.
func forwardedOrBrowser(r *http.Request) bool {
	if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" || r.Header.Get("X-Real-Ip") != "" {
		return true
	}
	for name := range r.Header {
		if strings.HasPrefix(name, "Sec-Fetch-") {
			return true
		}
	}
	return false
}

func fail(c echo.Context, status int, code string) error {
	return c.JSON(status, map[string]string{"error": code})
}
