package signin

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/models"
)

// Service applies the sign-in rules. Its fields are exactly its
// dependencies; it keeps no state between calls.
type Service struct {
	Users  Users
	Tokens Tokens
	// Passkeys stores passkeys and used WebAuthn challenges (passkey.go).
	Passkeys Passkeys
	Hooks    Hooks
	// Now is the clock.
	Now func() time.Time
	// TokenHashes turns an e-mail token into the values stored for it, one
	// per secret: the first is stored for new links, any matches when
	// redeeming (secret rotation).
	TokenHashes func(token string) []string
	// JWTSessions is true when sessions live in the cookie: the JWT hook
	// shapes their claims, and there is no session row to replace.
	JWTSessions bool
	// ReauthWindow is how recently the browser's session must have signed
	// in for a new OAuth identity to be linked to its user (the window of
	// adding a passkey): a linked identity outlives every session and a
	// password reset, so a borrowed or stolen session must not add one.
	// Zero refuses every such link.
	ReauthWindow time.Duration
	// Log takes the warnings of steps that do not stop a sign-in.
	Log *slog.Logger
	// SecondFactor is the second step's rules (second_step.go); nil when
	// two_factor.mode is off.
	SecondFactor *twofactor.Service
	// DeviceCookie is the name of the remembered-device cookie.
	DeviceCookie string
}

// SignedIn is a successful sign-in: the session is started.
type SignedIn struct {
	User     *models.User
	Provider string
	IsNew    bool
	// Linked is true when a new identity was linked to an existing user
	// (the signed-in one, or one found by e-mail): the HTTP layer tells
	// the user's address that a sign-in method was added.
	Linked bool
	// LinkHash is, for an e-mail link, its stored token hash: the HTTP
	// layer drops that link's binding from the browser.
	LinkHash string
	// Methods are how the session signed in (amr values, twofactor.Method*).
	Methods []string
	// SecondStep, when set, means no session started: the first factor
	// passed and the browser is to hold this pending second step (a code,
	// or an enrolment) instead.
	SecondStep *twofactor.Held
	// Device is a remembered-device cookie to give the browser ("" none).
	Device        string
	DeviceExpires time.Time
	// PasswordDevice is a password device cookie to give the browser (""
	// none): a right password makes it known to the account (Devices).
	PasswordDevice        string
	PasswordDeviceExpires time.Time
	// SecondFactor is how the second step was passed (zero: none): a
	// recovery code's use is told to the user's address.
	SecondFactor twofactor.Used
	// stepped: the second step is done (or was the first), so
	// startSession asks no gate.
	stepped bool
}

// checkSignIn asks the SignIn hook. A refusal is AccessDenied, or the hook's
// own redirect target (the HTTP layer validates it like any other).
func (s *Service) checkSignIn(ctx context.Context, in SignInInput) error {
	ok, to := s.Hooks.SignIn(ctx, in)
	switch {
	case to != "":
		return &Error{Code: CodeAccessDenied, Cause: errors.New("the SignIn hook redirected the sign-in"), Redirect: to}
	case !ok:
		return Fail(CodeAccessDenied, errors.New("sign-in refused by the SignIn hook"))
	}
	return nil
}

// startSession asks the second-factor gate (when two-factor is on), then
// runs the JWT hook (jwt strategy) and creates the session. When the gate
// holds the sign-in, no session starts: in.SecondStep is set instead.
func (s *Service) startSession(ctx context.Context, b Browser, in *SignedIn) error {
	if held, err := s.gate(ctx, b, in); err != nil || held {
		return err
	}
	u := in.User
	su := session.User{ID: u.ID, Name: u.Name, Email: u.Email, Image: u.Image, EmailVerified: u.EmailVerified != nil, Methods: in.Methods, Provider: in.Provider}
	var claims map[string]any
	if s.JWTSessions {
		trigger := "signIn"
		if in.IsNew {
			trigger = "signUp"
		}
		claims = s.Hooks.JWT(session.DefaultClaims(su), JWTInput{User: u, Provider: in.Provider, Trigger: trigger, IsNewUser: in.IsNew})
		if claims == nil {
			return Fail(CodeAccessDenied, errors.New("the JWT hook returned no token"))
		}
	}
	s.endPreviousSession(ctx, b)
	if err := b.StartSession(ctx, su, claims); err != nil {
		return Failf(CodeCallback, "start session: %w", err)
	}
	return nil
}
