package app

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// oauthCallback completes an OAuth sign-in. Every callback spends the
// browser's attempt, whatever its outcome: the check cookie is read once and
// cleared, so a state works at most once. A failed callback also gets a new
// CSRF token (a successful one gets it in afterSignIn), which retires every
// state derived from the old one.
func (a *App) oauthCallback(c echo.Context, rq *web.Request, p config.Provider) error {
	chk, chkErr := a.checks.take(c.Request(), p.ID, a.now())
	a.checks.clear(c.Response())
	err := a.completeOAuth(c, rq, p, chk, chkErr)
	if err != nil {
		a.kit.IssueCSRF(c.Response())
	}
	return err
}

// completeOAuth runs the checks — the IdP's error (Callback), then the check
// cookie, the state, PKCE and nonce (any failure is OAuthCallback with
// nothing created) — and the code exchange; the linking rules and the
// session are the core's.
func (a *App) completeOAuth(c echo.Context, rq *web.Request, p config.Provider, chk oauthCheck, chkErr error) error {
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
	client := a.oauth[p.ID]
	if client.UsesPKCE() && chk.Verifier == "" || client.UsesNonce() && chk.Nonce == "" {
		return signin.Fail(signin.CodeOAuthCallback, errors.New("check cookie lacks the PKCE verifier or nonce"))
	}
	res, err := client.Exchange(c.Request().Context(), params.Get("code"), chk.Verifier, chk.Nonce)
	if err != nil {
		return signin.Failf(signin.CodeOAuthCallback, "provider %s: %w", p.ID, err)
	}

	out, err := a.core.OAuth(c.Request().Context(), a.browser(c), signin.OAuthIdentity{
		Provider:                          p.ID,
		AllowDangerousEmailAccountLinking: p.AllowDangerousEmailAccountLinking,
		Profile:                           res.Profile,
		Account:                           accountFrom(p.ID, client.Type(), res),
	})
	if err != nil {
		return err
	}
	if out.Linked {
		a.methodAdded(a.kit.MailContext(c, rq), out.User, p.ID, providerName(p))
	}
	return a.kit.AfterSignIn(c, rq, out)
}

// accountFrom maps the token set to an Account row, as Auth.js stores it.
func accountFrom(provider, typ string, res *oauth.Result) *models.Account {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	acc := &models.Account{
		Type:              typ,
		Provider:          provider,
		ProviderAccountID: res.Profile.ID,
		AccessToken:       opt(res.Token.AccessToken),
		RefreshToken:      opt(res.Token.RefreshToken),
		TokenType:         opt(res.Token.TokenType),
		IDToken:           opt(res.IDToken),
	}
	if !res.Token.Expiry.IsZero() {
		exp := res.Token.Expiry.Unix()
		acc.ExpiresAt = &exp
	}
	if s, ok := res.Token.Extra("scope").(string); ok {
		acc.Scope = opt(s)
	}
	if s, ok := res.Token.Extra("session_state").(string); ok {
		acc.SessionState = opt(s)
	}
	return acc
}

// formPostBounce turns a cross-site POST callback (response_mode=form_post)
// that arrived without our SameSite=Lax cookies into a 303 to the GET
// callback with the same parameters: the browser sends Lax cookies on that
// top-level GET, so the state check can run. Nothing is set on the way, so
// the user's CSRF cookie survives.
func (a *App) formPostBounce(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if _, err := r.Cookie(a.names.CSRF); err == nil {
			return next(c)
		}
		p, ok := a.providers.byID[c.Param("provider")]
		if !ok || p.Type == config.TypeEmail || p.Type == config.TypeWebAuthn || p.Type == config.TypeCredentials {
			return next(c)
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, a.cfg.MaxBodyBytes)
		if err := r.ParseForm(); err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, "malformed request body")
		}
		q := url.Values{}
		for _, k := range []string{"code", "state", "error", "error_description", "iss"} {
			if v := r.PostForm.Get(k); v != "" {
				q.Set(k, v)
			}
		}
		return c.Redirect(http.StatusSeeOther, a.base.URL("/callback/"+p.ID)+"?"+q.Encode())
	}
}
