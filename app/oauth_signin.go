package app

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// oauthSignIn redirects to the provider's authorization endpoint with
// state = hash of the CSRF token, PKCE S256 where supported and a nonce for
// OIDC. The callback URL is already in its cookie (request init).
func (a *App) oauthSignIn(c echo.Context, rq *request, p config.Provider) error {
	client := a.oauth[p.ID]
	now := a.now()
	var verifier, nonce string
	if client.UsesPKCE() {
		verifier = oauth.RandomValue()
		if err := a.checks.set(c.Response(), a.names.PKCE, p.ID, verifier, now); err != nil {
			return signin.Fail(signin.CodeOAuthSignin, err)
		}
	}
	if client.UsesNonce() {
		nonce = oauth.RandomValue()
		if err := a.checks.set(c.Response(), a.names.Nonce, p.ID, nonce, now); err != nil {
			return signin.Fail(signin.CodeOAuthSignin, err)
		}
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
	to, err := client.AuthURL(c.Request().Context(), oauth.State(rq.csrfToken, p.ID), verifier, nonce, params)
	if err != nil {
		return signin.Fail(signin.CodeOAuthSignin, err)
	}
	return a.sendRedirect(c, rq, to)
}
