package oauthflow

import (
	"cmp"
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// Callback (GET or POST /callback/:provider) completes an OAuth sign-in. Every callback spends the
// browser's attempt, whatever its outcome: the check cookie is read once and
// cleared, so a state works at most once. A failed callback also gets a new
// CSRF token (a successful one gets it in afterSignIn), which retires every
// state derived from the old one.
func (h *Handler) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	chk, chkErr := h.checks.take(c.Request(), p.ID, h.now())
	h.checks.clear(c.Response())
	if chkErr == nil && chk.Lang != "" {
		rq.LangHint = chk.Lang // the sign-in page's lang: the error page and the link notice speak it
	}
	err := h.completeOAuth(c, rq, p, chk, chkErr)
	if err != nil {
		h.kit.IssueCSRF(c.Response())
	}
	return err
}

// completeOAuth runs the checks — the IdP's error (Callback), then the check
// cookie, the state, PKCE and nonce (any failure is OAuthCallback with
// nothing created) — and the code exchange; the linking rules and the
// session are the core's.
func (h *Handler) completeOAuth(c echo.Context, rq *web.Request, p config.Provider, chk oauthCheck, chkErr error) error {
	params := c.QueryParams()
	if c.Request().Method == http.MethodPost {
		params = rq.Form
	}
	if e := params.Get("error"); e != "" {
		// The IdP refused (access_denied, ...): next-auth reports Callback.
		return signin.Failf(signin.CodeCallback, "provider %s returned error %q", p.ID, e)
	}
	if chkErr != nil {
		return signin.Fail(signin.CodeOAuthCallback, chkErr)
	}
	if !oauth.StateMatches(rq.CSRFToken, p.ID, chk.Attempt, params.Get("state")) {
		return signin.Fail(signin.CodeOAuthCallback, errors.New("state does not match the CSRF and check cookies"))
	}
	client := h.clients[p.ID]
	if client.UsesPKCE() && chk.Verifier == "" || client.UsesNonce() && chk.Nonce == "" {
		return signin.Fail(signin.CodeOAuthCallback, errors.New("check cookie lacks the PKCE verifier or nonce"))
	}
	if err := client.CheckIssuer(c.Request().Context(), params.Get("iss"), params.Has("iss")); err != nil {
		return signin.Failf(signin.CodeOAuthCallback, "provider %s: %w", p.ID, err)
	}
	res, err := client.Exchange(c.Request().Context(), params.Get("code"), chk.Verifier, chk.Nonce)
	if err != nil {
		return signin.Failf(signin.CodeOAuthCallback, "provider %s: %w", p.ID, err)
	}

	out, err := h.core.OAuth(c.Request().Context(), h.browser(c), signin.OAuthIdentity{
		Provider:                          p.ID,
		AllowDangerousEmailAccountLinking: p.AllowDangerousEmailAccountLinking,
		Profile:                           res.Profile,
		Account:                           accountFrom(p.ID, client.Type(), res),
	})
	if out != nil && out.Linked { // told even when the sign-in then failed (signin.Service.OAuth)
		h.linkNotice(h.kit.MailContext(c, rq), out.User, p)
	}
	if err != nil {
		return err
	}
	if h.tokens != nil {
		// The sign-in stands without them: the app asks the user to sign
		// in again when it needs the token (GET /token answers so).
		if err := h.tokens.Keep(c.Request().Context(), p.ID, res.Profile.ID, res.Token, res.IDToken); err != nil {
			logs.RequestFailed(h.log, slog.LevelWarn, err, "keep provider tokens", "provider", p.ID, "request_id", web.RequestID(c), "err", err)
		}
	}
	return h.kit.AfterSignIn(c, rq, out)
}

// accountFrom is the Account row of the identity: the link alone. The
// provider's tokens are never part of it: for providers with store_tokens
// they are kept sealed after the sign-in (Tokens), for the others not at
// all.
func accountFrom(provider, typ string, res *oauth.Result) *models.Account {
	acc := &models.Account{Type: typ, Provider: provider, ProviderAccountID: res.Profile.ID}
	// What the account page shows for the identity: the provider's
	// address for it, else its name.
	if l := cmp.Or(res.Profile.Email, res.Profile.Name); l != "" {
		acc.Label = &l
	}
	return acc
}

// FormPostBounce is the POST callback route's middleware: it turns a
// cross-site POST callback (response_mode=form_post) that arrived without
// our SameSite=Lax cookies into a 303 to the GET callback with the same
// parameters: the browser sends Lax cookies on that
// top-level GET, so the state check can run. Nothing is set on the way, so
// the user's CSRF cookie survives.
func (h *Handler) FormPostBounce(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if _, err := r.Cookie(h.csrfCookie); err == nil {
			return next(c)
		}
		id := c.Param("provider")
		if _, ok := h.clients[id]; !ok { // not an OAuth or OIDC provider
			return next(c)
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, h.maxBodyBytes)
		if err := r.ParseForm(); err != nil {
			return web.BodyError(err) // 413 over server.max_body_bytes, as every POST route
		}
		q := url.Values{}
		for _, k := range []string{"code", "state", "error", "error_description", "iss"} {
			if v := r.PostForm.Get(k); v != "" {
				q.Set(k, v)
			}
		}
		return c.Redirect(http.StatusSeeOther, h.base.URL("/callback/"+id)+"?"+q.Encode())
	}
}
