package app

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// The two ceremonies, as Auth.js v5 names them.
const (
	actionAuthenticate = "authenticate"
	actionRegister     = "register"
)

// webauthnError is the 400/401 body of GET /webauthn-options, as Auth.js's.
type webauthnError struct {
	Error string `json:"error"`
}

// getWebAuthnOptions is Auth.js v5's GET /webauthn-options/:provider:
// the options for navigator.credentials.get (action=authenticate, the
// default) or .create (action=register, signed-in users only), with the
// ceremony's state sealed into the challenge cookie.
func (a *App) getWebAuthnOptions(c echo.Context) error {
	id := c.Param("provider")
	rp, ok := a.passkeys.rps[id]
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	action := c.QueryParam("action")
	if action == "" {
		action = actionAuthenticate
	}
	ctx, now := c.Request().Context(), a.now()
	var body struct {
		Action  string `json:"action"`
		Options any    `json:"options"`
	}
	body.Action = action
	switch action {
	case actionAuthenticate:
		opts, st, err := rp.BeginLogin()
		if err != nil {
			return err
		}
		if err := a.passkeys.setState(c.Response(), action, id, st, now); err != nil {
			return err
		}
		body.Options = opts
	case actionRegister:
		uid, recent, err := a.signedInRecently(c)
		if err != nil { // as GET /session: an unreadable session is none
			a.log.Warn("passkey options: the session could not be read", "err", err)
		}
		if uid == "" {
			return c.JSON(http.StatusUnauthorized, webauthnError{"Sign in before adding a passkey"})
		}
		if !recent {
			return c.JSON(http.StatusUnauthorized, webauthnError{"Sign in again to add a passkey"})
		}
		u, have, err := a.accountRules.PasskeyRegistrant(ctx, uid)
		if errors.Is(err, accounts.ErrSignedOut) { // deleted while its JWT lives on
			return c.JSON(http.StatusUnauthorized, webauthnError{"Sign in before adding a passkey"})
		}
		if err != nil {
			return a.passkeyStoreFailed(c, "look up the user and their passkeys", err)
		}
		opts, st, err := rp.BeginRegistration(u, have)
		if err != nil {
			return err
		}
		if err := a.passkeys.setState(c.Response(), action, id, st, now); err != nil {
			return err
		}
		body.Options = opts
	default:
		return c.JSON(http.StatusBadRequest, webauthnError{"Invalid action"})
	}
	return c.JSON(http.StatusOK, body)
}

// passkeyCallback is POST /callback/:provider of a webauthn provider, as
// Auth.js v5's: action and data (the PublicKeyCredential as JSON) in the
// body. authenticate signs in like any provider (redirect, or {url} in
// JSON mode); register adds a passkey to the signed-in user and returns to
// the passkeys page.
func (a *App) passkeyCallback(c echo.Context, rq *web.Request, p config.Provider) error {
	if c.Request().Method != http.MethodPost {
		return signin.Fail(signin.CodeWebAuthnVerification, errors.New("a passkey answer must be posted"))
	}
	ctx, id := c.Request().Context(), p.ID
	action := rq.Form.Get("action")
	if action != actionAuthenticate && action != actionRegister {
		return signin.Fail(signin.CodeWebAuthnVerification, errors.New("unknown passkey action"))
	}
	st, err := a.passkeys.takeState(c.Response(), c.Request(), action, id, a.now())
	cer := signin.Ceremony{Provider: id, RP: a.passkeys.rps[id], State: st, Answer: []byte(rq.Form.Get("data")),
		RefuseRegressed: p.CounterRegression != config.CounterWarn}
	if action == actionRegister {
		if err == nil {
			if _, recent, rerr := a.signedInRecently(c); rerr != nil || !recent {
				err = signin.Fail(signin.CodeSessionRequired, fmt.Errorf("passkey registration more than %s after signing in (or the session is unreadable: %v)", passkeyReauthWindow, rerr))
			}
		}
		if err == nil {
			_, err = a.core.AddPasskey(ctx, a.browser(c), cer, rq.Form.Get("name"))
		}
		if err != nil {
			a.log.Warn("passkey not added", "code", string(signin.CodeOf(err)), "cause", err.Error())
			return a.kit.SendRedirect(c, rq, a.kit.WithLang(c, rq, a.base.URL("/passkeys")+"?error="+url.QueryEscape(string(signin.CodeOf(wrapVerify(err))))))
		}
		a.log.Info("passkey added", "provider", id)
		return a.kit.SendRedirect(c, rq, a.kit.WithLang(c, rq, a.base.URL("/passkeys")+"?added=1"))
	}
	if err != nil {
		return signin.Fail(signin.CodeWebAuthnVerification, err)
	}
	in, err := a.core.Passkey(ctx, a.browser(c), cer)
	if err != nil {
		return err
	}
	return a.kit.AfterSignIn(c, rq, in)
}

// wrapVerify makes a bare cookie failure a verification error.
func wrapVerify(err error) error {
	var e *signin.Error
	if errors.As(err, &e) {
		return err
	}
	return signin.Fail(signin.CodeWebAuthnVerification, err)
}

// passkeyReauthWindow is how soon after signing in a user may add a
// passkey. A passkey outlives every session and a password reset, so a
// borrowed or stolen session, or one left open on a shared computer, must
// not be enough to add one: the user signs in again first.
const passkeyReauthWindow = 10 * time.Minute

// signedInRecently is the signed-in user's id ("" when none) and whether
// they signed in within passkeyReauthWindow.
func (a *App) signedInRecently(c echo.Context) (uid string, recent bool, err error) {
	s, _, err := a.sessions.Read(c.Request().Context(), c.Request())
	if err != nil || s == nil {
		return "", false, err
	}
	return s.User.ID, a.now().Sub(s.SignedIn) <= passkeyReauthWindow, nil
}

// passkeyStoreFailed answers register options when the database fails:
// 503 with a JSON error the page's script shows, the cause logged once.
func (a *App) passkeyStoreFailed(c echo.Context, step string, err error) error {
	a.log.Error("passkey options failed", "step", step, "err", err, "request_id", web.RequestID(c))
	return c.JSON(http.StatusServiceUnavailable, webauthnError{"Try again later"})
}
