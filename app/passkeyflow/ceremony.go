// Package passkeyflow is the passkey sign-in flow, as Auth.js v5's: GET
// {base}/webauthn-options/:provider makes a ceremony's options, and POST
// {base}/callback/:provider of a webauthn provider takes its answer: a
// sign-in, or a passkey added to the signed-in user. The relying parties
// and the challenge cookie are app/passkey's; the rules app/signin's.
package passkeyflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// The two ceremonies, as Auth.js v5 names them.
const (
	actionAuthenticate = "authenticate"
	actionRegister     = "register"
)

// Core is what the flow uses of the sign-in core (*signin.Service).
type Core interface {
	Passkey(ctx context.Context, b signin.Browser, c signin.Ceremony) (*signin.SignedIn, error)
	AddPasskey(ctx context.Context, b signin.Browser, c signin.Ceremony, name string) (*models.Authenticator, error)
}

// Registrants names who adds a passkey (*accounts.Service): the signed-in
// user and the passkeys they have (one deleted meanwhile is
// accounts.ErrSignedOut), and tells them once one is added.
type Registrants interface {
	PasskeyRegistrant(ctx context.Context, userID string) (*models.User, []models.Authenticator, error)
	// PasskeyAdded tells the user's address that a passkey was added.
	PasskeyAdded(ctx context.Context, userID string)
}

// SecondFactor tells whether a session must prove the second factor
// before it adds a passkey (*twofactor.Service); nil: two-factor is off.
type SecondFactor interface {
	NeedsSecondFactor(ctx context.Context, userID string, methods []string) (bool, error)
}

// Handler is the passkey flow: it mounts GET /webauthn-options/:provider
// and is the flow of webauthn providers behind POST /signin/:provider and
// /callback/:provider (SignIn, Callback, CallbackWithoutCSRF).
type Handler struct {
	kit          *web.Kit
	base         config.Base
	parties      *passkey.Parties
	core         Core
	registrants  Registrants
	secondFactor SecondFactor
	sessions     session.Strategy
	metrics      *metrics.Metrics // sessions started; nil: off
	now          func() time.Time
	log          *slog.Logger
}

// Deps are what the flow uses, built by the app's wiring.
type Deps struct {
	Kit         *web.Kit
	Parties     *passkey.Parties
	Core        Core
	Registrants Registrants
	// SecondFactor: nil when two_factor.mode is off.
	SecondFactor SecondFactor
	Sessions     session.Strategy
	Metrics      *metrics.Metrics
	Now          func() time.Time
	Log          *slog.Logger
}

// New builds the flow.
func New(d Deps) *Handler {
	return &Handler{kit: d.Kit, base: d.Kit.Base(), parties: d.Parties, core: d.Core, registrants: d.Registrants,
		secondFactor: d.SecondFactor, sessions: d.Sessions, metrics: d.Metrics, now: d.Now, log: d.Log}
}

// Mount registers GET /webauthn-options/:provider (no request init: it
// sets no CSRF or callback-url cookie).
func (h *Handler) Mount(m web.Mux) {
	m.Get("/webauthn-options/:provider", h.getWebAuthnOptions)
}

// browser is the request as the sign-in core sees it.
func (h *Handler) browser(c echo.Context) session.Browser {
	return session.Browser{Sessions: h.sessions, W: c.Response(), R: c.Request(), Created: h.metrics.SessionCreated}
}

// SignIn: a passkey sign-in is started by the sign-in page's script
// (GET /webauthn-options), as Auth.js's; a POST here goes back to the page.
func (h *Handler) SignIn(c echo.Context, rq *web.Request, _ config.Provider) error {
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL("/signin")))
}

// CallbackWithoutCSRF goes back to the sign-in page with ?csrf=true: CSRF
// is mandatory, as next-auth v4.
func (h *Handler) CallbackWithoutCSRF(c echo.Context, rq *web.Request, _ config.Provider) error {
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL("/signin")+"?csrf=true"))
}

// webauthnError is the 400/401/503 body of GET /webauthn-options, as
// Auth.js's; URL (latchkey's own) is where the passkeys page's script
// goes instead of showing the failure: the step-up form, or the sign-in
// page.
type webauthnError struct {
	Error string `json:"error"`
	URL   string `json:"url,omitempty"`
}

// optionsRefused is a JSON answer of GET /webauthn-options, through Kit.Fail.
func (h *Handler) optionsRefused(c echo.Context, status int, msg, what string, cause error) error {
	return h.kit.Fail(c, nil, web.JSONError(status, webauthnError{Error: msg}, what, cause))
}

// signInFirst is the 401 of register options for a browser a new sign-in
// mends (none, or signed in too long ago): url is the sign-in page, back
// to the passkeys page in the query's lang, where the page's script goes
// instead of only saying the passkey was not added.
func (h *Handler) signInFirst(c echo.Context, msg string) error {
	return h.kit.Fail(c, nil, web.JSONError(http.StatusUnauthorized, webauthnError{Error: msg, URL: h.kit.SignInURL(c, nil, passkeysPage)}, "", nil))
}

// passkeysPage is the passkeys page's path, where adding one returns.
const passkeysPage = "/passkeys"

// getWebAuthnOptions is Auth.js v5's GET /webauthn-options/:provider:
// the options for navigator.credentials.get (action=authenticate, the
// default) or .create (action=register, signed-in users only), with the
// ceremony's state sealed into the challenge cookie.
func (h *Handler) getWebAuthnOptions(c echo.Context) error {
	id := c.Param("provider")
	rp, ok := h.parties.RP(id)
	if !ok {
		return web.NotSupported
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	action := c.QueryParam("action")
	if action == "" {
		action = actionAuthenticate
	}
	ctx, now := c.Request().Context(), h.now()
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
		if err := h.parties.SetState(c.Response(), action, id, st, now); err != nil {
			return err
		}
		body.Options = opts
	case actionRegister:
		uid, may, err := h.signedInRecently(c)
		if err != nil && uid != "" { // the session was read, two-factor not: no sign-in would mend it
			return h.optionsRefused(c, http.StatusServiceUnavailable, "Try again later", "passkey options: may the session add a passkey", err)
		}
		if err != nil { // as GET /session: an unreadable session is none
			logs.RequestFailed(h.log, slog.LevelWarn, err, "passkey options: the session could not be read", "err", err)
		}
		switch {
		case uid == "":
			return h.signInFirst(c, "Sign in before adding a passkey")
		case may == stepUp:
			return c.JSON(http.StatusUnauthorized, webauthnError{Error: "Confirm with your second factor to add a passkey",
				URL: h.kit.StepUpURL(c, nil, passkeysPage)}) // in the query's lang
		case may != allowed:
			return h.signInFirst(c, "Sign in again to add a passkey")
		}
		u, have, err := h.registrants.PasskeyRegistrant(ctx, uid)
		if errors.Is(err, accounts.ErrSignedOut) { // deleted while its JWT lives on
			return h.signInFirst(c, "Sign in before adding a passkey")
		}
		if err != nil { // the database failed: a JSON error the page's script shows
			return h.optionsRefused(c, http.StatusServiceUnavailable, "Try again later", "passkey options: look up the user and their passkeys", err)
		}
		opts, st, err := rp.BeginRegistration(u, have)
		if err != nil {
			return err
		}
		if err := h.parties.SetState(c.Response(), action, id, st, now); err != nil {
			return err
		}
		body.Options = opts
	default:
		return h.optionsRefused(c, http.StatusBadRequest, "Invalid action", "", nil)
	}
	return c.JSON(http.StatusOK, body)
}

// Callback is POST /callback/:provider of a webauthn provider, as
// Auth.js v5's: action and data (the PublicKeyCredential as JSON) in the
// body. authenticate signs in like any provider (redirect, or {url} in
// JSON mode); register adds a passkey to the signed-in user and returns to
// the passkeys page.
func (h *Handler) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	if c.Request().Method != http.MethodPost {
		return signin.Fail(signin.CodeWebAuthnVerification, errors.New("a passkey answer must be posted"))
	}
	ctx, id := c.Request().Context(), p.ID
	action := rq.Form.Get("action")
	if action != actionAuthenticate && action != actionRegister {
		return signin.Fail(signin.CodeWebAuthnVerification, errors.New("unknown passkey action"))
	}
	st, err := h.parties.TakeState(c.Response(), c.Request(), action, id, h.now())
	rp, _ := h.parties.RP(id)
	cer := signin.Ceremony{Provider: id, RP: rp, State: st, Answer: []byte(rq.Form.Get("data")),
		RefuseRegressed: p.CounterRegression != config.CounterWarn}
	if action == actionRegister {
		if err == nil {
			switch uid, may, rerr := h.signedInRecently(c); {
			case rerr != nil && uid != "": // two-factor unreadable: the server's failure
				err = signin.Failf(signin.CodeCallback, "passkey registration: %w", rerr)
			case rerr == nil && may == stepUp: // logged by signedInRecently; nothing added
				return h.kit.ToStepUp(c, rq, passkeysPage)
			case rerr != nil || may != allowed:
				err = signin.Fail(signin.CodeSessionRequired, fmt.Errorf("passkey registration more than %s after signing in (or the session is unreadable: %v)", passkey.ReauthWindow, rerr))
			}
		}
		if err == nil {
			var added *models.Authenticator
			if added, err = h.core.AddPasskey(ctx, h.browser(c), cer, rq.Form.Get("name")); err == nil {
				h.registrants.PasskeyAdded(h.kit.MailContext(c, rq), added.UserID) // in the page's language
			}
		}
		if err != nil {
			level := slog.LevelWarn // a refusal
			if code := signin.CodeOf(err); code == signin.CodeCallback || code == signin.CodeTryLater {
				level = slog.LevelError // the server's failure
			}
			logs.RequestFailed(h.log, level, err, "passkey not added", "code", string(signin.CodeOf(err)), "cause", err.Error())
			return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(passkeysPage)+"?error="+url.QueryEscape(string(signin.CodeOf(wrapVerify(err))))))
		}
		h.log.Info("passkey added", "provider", id)
		return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(passkeysPage)+"?added=1"))
	}
	if err != nil {
		return signin.Fail(signin.CodeWebAuthnVerification, err)
	}
	in, err := h.core.Passkey(ctx, h.browser(c), cer)
	if err != nil {
		return err
	}
	return h.kit.AfterSignIn(c, rq, in)
}

// wrapVerify makes a bare cookie failure a verification error.
func wrapVerify(err error) error {
	var e *signin.Error
	if errors.As(err, &e) {
		return err
	}
	return signin.Fail(signin.CodeWebAuthnVerification, err)
}

// mayAdd is whether a session may add a passkey (signedInRecently).
type mayAdd int

const (
	notRecent mayAdd = iota // signed in too long ago: sign in again
	stepUp                  // recent, but two-factor is on and the session did not use it: the step-up form
	allowed
)

// signedInRecently is the signed-in user's id ("" when none) and whether
// they may add a passkey: signed in within passkey.ReauthWindow and, when
// two-factor is in force for them, with it (SecondFactor; stepUp
// otherwise). A passkey that verifies the user counts as two factors at
// sign-in, so a password session from before two-factor was turned on
// must not add one.
func (h *Handler) signedInRecently(c echo.Context) (uid string, may mayAdd, err error) {
	ctx := c.Request().Context()
	s, _, err := h.sessions.Read(ctx, c.Request())
	if err != nil || s == nil {
		return "", notRecent, err
	}
	if h.now().Sub(s.Proven()) > passkey.ReauthWindow {
		return s.User.ID, notRecent, nil
	}
	if h.secondFactor != nil {
		need, err := h.secondFactor.NeedsSecondFactor(ctx, s.User.ID, s.Methods())
		if err != nil {
			return s.User.ID, notRecent, fmt.Errorf("ask whether two-factor is in force: %w", err)
		}
		if need {
			h.log.Info("passkey registration needs a session that used the second factor", "user", s.User.ID)
			return s.User.ID, stepUp, nil
		}
	}
	return s.User.ID, allowed, nil
}
