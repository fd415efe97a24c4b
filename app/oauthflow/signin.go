package oauthflow

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// SignIn (POST /signin/:provider, CSRF checked) starts one sign-in attempt: a fresh attempt nonce, PKCE S256
// where supported and a nonce for OIDC, sealed in the check cookie, and a
// redirect to the provider's authorization endpoint with state = a hash of
// the CSRF token, the provider and the attempt nonce. The callback URL is
// already in its cookie (request init).
func (h *Handler) SignIn(c echo.Context, rq *web.Request, p config.Provider) error {
	client := h.clients[p.ID]
	now := h.now()
	chk := oauthCheck{Attempt: oauth.RandomValue(), Provider: p.ID, Created: now.Unix()}
	if l := h.kit.ExplicitLang(c, rq); l != nil {
		chk.Lang = l.Tag() // the IdP's redirect back carries no lang
	}
	if client.UsesPKCE() {
		chk.Verifier = oauth.RandomValue()
	}
	if client.UsesNonce() {
		chk.Nonce = oauth.RandomValue()
	}
	// Configured parameters first, then the POST URL's query (signIn's
	// authorizationParams) which may override them.
	params := url.Values{}
	for k, v := range p.AuthorizationParams {
		params.Set(k, v)
	}
	for k, vs := range c.QueryParams() {
		params[k] = vs
	}
	to, err := client.AuthURL(c.Request().Context(), oauth.State(rq.CSRFToken, p.ID, chk.Attempt), chk.Verifier, chk.Nonce, params)
	if err != nil {
		return signin.Fail(signin.CodeOAuthSignin, err)
	}
	if err := h.checks.set(c.Response(), chk, now); err != nil {
		return signin.Fail(signin.CodeOAuthSignin, err)
	}
	return h.kit.SendRedirect(c, rq, to)
}
