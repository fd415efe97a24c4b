package app

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/models"
)

// oauthCallback completes an OAuth sign-in: state, PKCE and nonce checks
// (any failure → OAuthCallback, nothing created), code exchange, profile,
// the linking rules, then a session.
func (a *App) oauthCallback(c echo.Context, rq *request, p config.Provider) error {
	params := c.QueryParams()
	if c.Request().Method == http.MethodPost {
		params = rq.form
	}
	if e := params.Get("error"); e != "" {
		// The IdP refused (access_denied, ...): next-auth reports Callback.
		return a.fail(c, rq, ErrCallback, fmt.Errorf("provider %s returned error %q", p.ID, e))
	}
	if !oauth.StateMatches(rq.csrfToken, p.ID, params.Get("state")) {
		return a.fail(c, rq, ErrOAuthCallback, errors.New("state does not match the CSRF cookie"))
	}
	client := a.oauth[p.ID]
	now := a.now()
	var verifier, nonce string
	var err error
	if client.UsesPKCE() {
		if verifier, err = a.checks.take(c.Request(), a.names.PKCE, p.ID, now); err != nil {
			return a.fail(c, rq, ErrOAuthCallback, err)
		}
	}
	if client.UsesNonce() {
		if nonce, err = a.checks.take(c.Request(), a.names.Nonce, p.ID, now); err != nil {
			return a.fail(c, rq, ErrOAuthCallback, err)
		}
	}
	res, err := client.Exchange(c.Request().Context(), params.Get("code"), verifier, nonce)
	if err != nil {
		return a.fail(c, rq, ErrOAuthCallback, fmt.Errorf("provider %s: %w", p.ID, err))
	}
	if client.UsesPKCE() {
		a.cookies.Clear(c.Response(), a.names.PKCE)
	}
	if client.UsesNonce() {
		a.cookies.Clear(c.Response(), a.names.Nonce)
	}

	acc := accountFrom(p.ID, client.Type(), res)
	user, isNew, code, err := a.linkAccount(c, p, res.Profile, acc)
	var refusal *signInRefusal
	if errors.As(err, &refusal) {
		return a.refuse(c, rq, refusal)
	}
	if err != nil {
		return a.fail(c, rq, code, err)
	}
	return a.finishSignIn(c, rq, signedIn{User: user, Provider: p.ID, IsNew: isNew, CallbackURL: rq.callbackURL})
}

// linkAccount applies next-auth's linking table. It returns the user to sign
// in, whether it was created, and the error code when refused.
func (a *App) linkAccount(c echo.Context, p config.Provider, prof oauth.Profile, acc *models.Account) (*models.User, bool, string, error) {
	ctx := c.Request().Context()
	current, err := a.currentUser(c)
	if err != nil {
		return nil, false, ErrCallback, err
	}
	linked, err := a.store.UserByAccount(ctx, acc.Provider, acc.ProviderAccountID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return nil, false, ErrCallback, err
	}
	profileUser := userFromProfile(prof)
	candidate := profileUser
	if linked != nil {
		candidate = linked
	}
	if refusal := a.checkSignIn(c, SignInInput{User: *candidate, Provider: p.ID, Type: acc.Type, Email: prof.Email}); refusal != nil {
		return nil, false, "", refusal
	}

	switch {
	case linked != nil && current != nil && current.User.ID != linked.ID:
		return nil, false, ErrOAuthAccountNotLinked, errors.New("account is linked to another user than the signed-in one")
	case linked != nil:
		return linked, false, "", nil
	case current != nil:
		user, err := a.store.UserByID(ctx, current.User.ID)
		if err != nil {
			return nil, false, ErrCallback, fmt.Errorf("signed-in user: %w", err)
		}
		acc.UserID = user.ID
		if err := a.store.LinkAccount(ctx, acc); err != nil {
			return nil, false, ErrOAuthAccountNotLinked, err
		}
		return user, false, "", nil
	}
	if prof.Email != "" {
		byEmail, err := a.store.UserByEmail(ctx, prof.Email)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			return nil, false, ErrCallback, err
		}
		if byEmail != nil {
			if !p.AllowDangerousEmailAccountLinking {
				return nil, false, ErrOAuthAccountNotLinked, errors.New("a user with this e-mail exists and the account is not linked")
			}
			acc.UserID = byEmail.ID
			if err := a.store.LinkAccount(ctx, acc); err != nil {
				return nil, false, ErrOAuthAccountNotLinked, err
			}
			return byEmail, false, "", nil
		}
	}
	if err := a.store.CreateUserWithAccount(ctx, profileUser, acc); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return nil, false, ErrOAuthAccountNotLinked, err
		}
		return nil, false, ErrOAuthCreateAccount, err
	}
	return profileUser, true, "", nil
}

func userFromProfile(p oauth.Profile) *models.User {
	u := &models.User{}
	if p.Name != "" {
		u.Name = &p.Name
	}
	if p.Email != "" {
		u.Email = &p.Email
	}
	if p.Image != "" {
		u.Image = &p.Image
	}
	return u
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
		if !ok || typeOf(p) == config.TypeEmail {
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
