// Package accounts holds the rules of the account pages, with no HTTP in
// them: password sign-up and reset, adding and changing a password,
// managing passkeys, signing out everywhere and removing linked sign-in
// methods. It is the sign-in core's sibling (app/signin had grown past the
// size of one room): it uses that core's e-mailed-link helper
// (signin.MailedLinks), its unverified-address rule (signin.UnprovedClaim)
// and its stand-in user, so each of those is stated once. Its storage is
// small interfaces declared here, which *models.Store implements; the
// rules are tested with in-memory fakes.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/passwordstore"
)

// Link lifetimes: a sign-up confirmation may wait for the next day; a reset
// link is a bearer credential for the account and lives half an hour (the
// reset messages in views/locales say "30 minutes": change both).
const (
	SignUpLinkMaxAge = 24 * time.Hour
	ResetLinkMaxAge  = 30 * time.Minute
)

// Token purposes: each flow hashes its tokens under its own prefix, so no
// link of one flow works in another or as a sign-in link. Stored rows
// depend on them: never change one.
const (
	purposeSignUp = "password-signup:"
	purposeReset  = "password-reset:"
)

// Users is the user storage the account rules read.
type Users interface {
	UserByID(ctx context.Context, id string) (*models.User, error)
	UserByEmail(ctx context.Context, email string) (*models.User, error)
	AccountsOf(ctx context.Context, userID string) ([]models.Account, error)
	signin.SignInMethods
}

// SignUps stores pending sign-ups: a link's token hash and the hash of the
// password chosen with it, nothing about an account.
type SignUps interface {
	CreatePasswordSignUp(ctx context.Context, email, tokenHash, passwordHash string, expires time.Time) error
	DeletePasswordSignUp(ctx context.Context, tokenHash string) error
	PasswordSignUpByHash(ctx context.Context, tokenHash string, now time.Time) (*passwordstore.PendingSignUp, error)
	// CompletePasswordSignUp creates the verified user with the password
	// and spends the address's pending sign-ups; an address with a
	// verified user is models.ErrConflict. An unverified user without a
	// way to sign in is claimed instead, and its sessions end.
	CompletePasswordSignUp(ctx context.Context, tokenHash string, now time.Time) (*passwordstore.SignedUp, error)
}

// Resets stores reset links (also the links that add a password).
type Resets interface {
	CreatePasswordReset(ctx context.Context, userID, tokenHash string, expires time.Time) error
	DeletePasswordReset(ctx context.Context, userID, tokenHash string) error
	PasswordResetByHash(ctx context.Context, tokenHash string, now time.Time) (string, error)
	// CompletePasswordReset sets the password, verifies the address and
	// ends every session of the user, in one transaction.
	// It returns the user who holds the password afterwards: userID, or a
	// new user when an unverified claimant held the address.
	CompletePasswordReset(ctx context.Context, userID, tokenHash, passwordHash string, now time.Time) (holderID string, ended int64, err error)
}

// Passwords reads a user's password.
type Passwords interface {
	// PasswordHash is the user's PHC hash; none is models.ErrNotFound.
	PasswordHash(ctx context.Context, userID string) (string, error)
}

// Passkeys lists and renames a user's passkeys.
type Passkeys interface {
	AuthenticatorsOf(ctx context.Context, userID string) ([]models.Authenticator, error)
	// RenameAuthenticator renames the user's passkey id; another user's
	// is models.ErrNotFound.
	RenameAuthenticator(ctx context.Context, userID, id, name string) error
}

// Revocations ends JWT sessions, which live in their cookies: those of a
// user signed in up to at are refused from then on.
type Revocations interface {
	RevokeSessions(ctx context.Context, userID string, at time.Time) (int64, error)
}

// Deleter deletes a user and everything that is theirs, revoking their JWT
// sessions, in one transaction.
type Deleter interface {
	DeleteUser(ctx context.Context, userID string, at time.Time) (models.Deleted, error)
}

// Store is the storage the account rules use. *models.Store implements it.
type Store interface {
	Users
	Passwords
	Revocations
	Deleter
}

// PasswordFlows stores the password flows: sign-up and reset links, and a
// password change. *passwordstore.Store implements it.
type PasswordFlows interface {
	SignUps
	Resets
	// ChangePassword replaces old (else models.ErrConflict) and ends every
	// session of the user, in one transaction.
	ChangePassword(ctx context.Context, userID, old, passwordHash string, now time.Time) (int64, error)
}

// Core is what the account rules use of the sign-in core: its rules about
// linked identities and the last way to sign in. *signin.Service is it.
type Core interface {
	UnlinkAccounts(ctx context.Context, userID string, offered signin.WaysOffered) (int64, bool, error)
	RemovePasskey(ctx context.Context, userID, id string, offered signin.WaysOffered) error
}

// Mailer delivers the account e-mails. The HTTP layer renders them, in the
// language ctx carries, and turns a token into its page's link.
type Mailer interface {
	SignUpLink(ctx context.Context, to, token string) error
	// SignUpExisting tells an address with an account to reset instead.
	SignUpExisting(ctx context.Context, to string) error
	// ResetLink is the reset link, or the link that adds a password.
	ResetLink(ctx context.Context, to, token string) error
	// ResetUnknown tells an address that no account has it.
	ResetUnknown(ctx context.Context, to string) error
	// MethodAdded tells a user that a sign-in method (provider, by name)
	// was linked to the account.
	MethodAdded(ctx context.Context, to, provider string) error
	// TwoFactorChanged tells a user that two-factor was turned on or off,
	// or that a recovery code was used (left: how many remain).
	TwoFactorChanged(ctx context.Context, to string, event TwoFactorEvent, left int) error
	// MethodRemoved tells a user that a sign-in method was unlinked.
	MethodRemoved(ctx context.Context, to, provider string) error
	// PasskeyChanged tells a user that a passkey was added to the account
	// (added) or removed from it.
	PasskeyChanged(ctx context.Context, to string, added bool) error
	// EmailChangeLink is the link that moves the account to the address to.
	EmailChangeLink(ctx context.Context, to, token string) error
	// EmailInUse tells an address with an account that someone tried to
	// move another account to it.
	EmailInUse(ctx context.Context, to string) error
	// EmailChanged tells the old address the new one.
	EmailChanged(ctx context.Context, to, newAddr string) error
	// AccountDeleted tells the address that its account is gone.
	AccountDeleted(ctx context.Context, to string) error
}

// TwoFactorEvent is what a two-factor notice tells.
type TwoFactorEvent int

// The two-factor notices.
const (
	TwoFactorTurnedOn TwoFactorEvent = iota
	TwoFactorTurnedOff
	RecoveryCodeUsed
	// RecoveryCodesReplaced: a new set was made; the old codes stopped
	// working (left: how many the new set has).
	RecoveryCodesReplaced
)

// Offered is what the configuration offers, as the rules about the last
// way to sign in need it.
type Offered struct {
	Passwords bool // a credentials provider is configured
	Email     bool // an e-mail provider is configured (sign-in links)
	Passkeys  bool // a webauthn provider is configured
}

// ways is o as the sign-in core's rule about the last way in takes it.
func (o Offered) ways() signin.WaysOffered {
	return signin.WaysOffered{Email: o.Email, Passwords: o.Passwords, Passkeys: o.Passkeys}
}

// Service applies the account rules. Its fields are exactly its
// dependencies; it keeps no state between calls.
type Service struct {
	Store    Store
	Flows    PasswordFlows
	Passkeys Passkeys
	Core     Core
	Hooks    signin.Hooks
	// Provider is the credentials provider's id, as the SignIn hook sees it.
	Provider string
	Offered  Offered
	Hasher   *password.Hasher
	Policy   *password.Policy
	// Throttle counts wrong passwords typed on the account pages in the
	// password sign-in's buckets: guessing there is guessing at sign-in.
	Throttle *signin.Throttle
	Limits   signin.Limiter // nil: no rate limits
	Mail     Mailer         // nil: no e-mail provider, nothing that needs mail is offered
	// Hashes is a value's hash under every secret, the current one first.
	Hashes func(value string) []string
	// SessionsEnded runs after a user's sessions were revoked at at: the
	// HTTP layer reloads its revocations and waits out that second.
	SessionsEnded func(ctx context.Context, at time.Time)
	// RevocationsChanged has this instance read the ended sign-ins at once
	// (a JWT ended by id); nil: the poll will.
	RevocationsChanged func(ctx context.Context)
	// UserChanged runs after a user's profile changed (an e-mail change):
	// the session strategy drops the profiles it kept (session.ProfileCache);
	// nil: none are kept.
	UserChanged func()
	Now         func() time.Time
	Log         *slog.Logger
	// Centre is the account page's storage (models/accountstore).
	Centre Centre
	// ReauthWindow is how recently a session must have signed in for the
	// account page's guarded changes (passkey.ReauthWindow).
	ReauthWindow time.Duration
	// SelfDelete: users may delete their own account (account.self_delete).
	SelfDelete bool
	// Devices forgets the browsers a user asked two-factor to remember (a
	// password reset and signing out everywhere take them back); nil when
	// two-factor is off.
	Devices DeviceForgetter
	// SecondFactor says whether a session must prove the second factor
	// before removing a passkey (Privileged); nil when two-factor is off.
	SecondFactor SecondFactor
}

// DeviceForgetter forgets every remembered browser of a user
// (*twofactor.Service).
type DeviceForgetter interface {
	ForgetDevices(ctx context.Context, userID string) error
}

// takeBack ends what the user's sessions leave behind that would outlive
// them, when signing out everywhere or a password reset or change ends
// them: the browsers remembered for the second factor (one could skip it),
// and the pending e-mail change links (one started from a stolen session
// goes to an address its holder reads, and would move the account's
// address there, and a password reset with it, after the owner had locked
// the holder out). A failure is returned (the caller decides whether it
// stops anything).
func (s *Service) takeBack(ctx context.Context, userID string) error {
	if userID == "" {
		return nil
	}
	if s.Devices != nil {
		if err := s.Devices.ForgetDevices(ctx, userID); err != nil {
			return fmt.Errorf("forget remembered browsers: %w", err)
		}
	}
	if s.Centre == nil { // no account page: no e-mail changes
		return nil
	}
	n, err := s.Centre.DeleteEmailChanges(ctx, userID)
	if err != nil {
		return fmt.Errorf("end pending e-mail changes: %w", err)
	}
	if n > 0 {
		s.Log.Info("pending e-mail changes ended", "user", userID, "ended", n)
	}
	return nil
}

// Refusals: the answers a person sees (none says whether an address has
// an account). Any other error is the database or the mail server
// failing. A refused password wraps ErrPolicy and the policy's reason
// (*password.Refusal, or password.ErrBusy).
var (
	ErrBadAddress       = errors.New("not an e-mail address")
	ErrPolicy           = errors.New("password refused")
	ErrHookRefused      = errors.New("refused by the SignIn hook")
	ErrRateLimited      = errors.New("e-mail rate limited")
	ErrDeadLink         = errors.New("unknown, spent or expired link")
	ErrThrottled        = errors.New("password check throttled")
	ErrWrongPassword    = errors.New("wrong password")
	ErrAccountExists    = errors.New("the address has an account")
	ErrChangedMeanwhile = errors.New("the password changed meanwhile")
	ErrNoPassword       = errors.New("the user has no password")
	ErrNoConfirmedEmail = errors.New("the user has no confirmed address")
	ErrSignedOut        = errors.New("no signed-in user")
)

// links are a flow's e-mailed links.
func (s *Service) links(purpose string) signin.MailedLinks {
	return signin.MailedLinks{Purpose: purpose, Hashes: s.Hashes}
}

// checkPolicy applies the password policy; a refusal is logged (its reason,
// never the password) and wraps ErrPolicy.
func (s *Service) checkPolicy(flow, pw, addr string) error {
	if err := s.Policy.Check(pw, addr); err != nil {
		s.Log.Info(flow+" refused: password policy", "reason", err.Error())
		return fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return nil
}

// hash hashes a password the policy has read.
func (s *Service) hash(pw string) (string, error) {
	h, err := s.Hasher.Hash(pw)
	if err != nil { // the policy has read it: not expected (or busy)
		return "", fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return h, nil
}

// allowMail counts one e-mail to addr, whose user is u (nil: none), against
// the limits, every tier of them. The global budget, which strangers can
// spend, does not apply to a user's verified address (email.Request.Owner):
// its owner still gets the e-mail that signs in or resets the password.
// A refusal is ErrRateLimited (logged); limits that cannot be read refuse.
func (s *Service) allowMail(ctx context.Context, flow, addr, clientIP string, u *models.User) error {
	if s.Limits == nil {
		return nil
	}
	r := email.Request{Addr: addr, ClientIP: clientIP, Owner: u != nil && u.EmailVerified != nil}
	ok, why, err := s.Limits.Allow(ctx, r, s.Now())
	switch {
	case err != nil:
		return fmt.Errorf("%s: check the e-mail limits: %w", flow, err)
	case !ok:
		s.Log.Warn("password flow e-mail refused", "flow", flow, "reason", why)
		return ErrRateLimited
	}
	return nil
}

// userByEmail is the user holding addr, nil when none.
func (s *Service) userByEmail(ctx context.Context, addr string) (*models.User, error) {
	u, err := s.Store.UserByEmail(ctx, addr)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("look up the address: %w", err)
	}
	return u, nil
}

// checkPassword checks pw against an account's hash in the password
// sign-in's throttle buckets (guessing here is guessing there), as userID
// (the user holding addr; "" for a sign-up's, which has none yet, so no
// client is known to it and a right password marks none), with the
// browser's password device cookie as the sign-in reads it (device, ""
// none: a known browser is exempt from the account and network blocks
// here too, and its failures count against the cookie): the reservation,
// succeeded, when it matches, else ErrThrottled (throttled, or busy) or
// ErrWrongPassword, with the failure counted (Reserve counts it in
// advance), or another error when the counters cannot be reached (the
// handler's "try again"). A password no account can have (empty, NUL,
// over password.MaxInputBytes) is wrong before the throttle or the hasher
// sees it, as the password sign-in refuses it (signin.SignInWithPassword):
// nothing is counted.
func (s *Service) checkPassword(ctx context.Context, flow, addr, userID, hash, pw, clientIP, device string) (*signin.Reservation, error) {
	if _, err := password.Normalize(pw); err != nil {
		s.Log.Warn("password check refused: unreadable password", "flow", flow, "err", err)
		return nil, ErrWrongPassword
	}
	held, err := s.Throttle.Reserve(ctx, addr, userID, clientIP, device, s.Now())
	switch {
	case errors.Is(err, signin.ErrThrottled):
		s.Log.Warn("password check refused", "flow", flow, "err", err)
		return nil, ErrThrottled
	case err != nil:
		// The counters could not be read or written (the database is down
		// or failing over): no password is checked (fail closed), and the
		// page says "try again" (503), not "too many attempts".
		return nil, fmt.Errorf("%s: password throttle: %w", flow, err)
	}
	ok, _, err := s.Hasher.Verify(hash, pw)
	switch {
	case err != nil: // busy, or an unreadable stored hash: not a failure
		held.Release(ctx)
		s.Log.Warn("password check refused", "flow", flow, "err", err)
		return nil, ErrThrottled
	case ok:
		if err := held.Succeeded(ctx, s.Now()); err != nil {
			s.Log.Warn("password throttle not reset", "err", err)
		}
		return held, nil
	}
	s.Log.Warn("password check refused: wrong password", "flow", flow)
	return nil, ErrWrongPassword
}

// sessionsEnded tells the HTTP layer that a user's sessions were revoked.
func (s *Service) sessionsEnded(ctx context.Context, at time.Time) {
	if s.SessionsEnded != nil {
		s.SessionsEnded(ctx, at)
	}
}
