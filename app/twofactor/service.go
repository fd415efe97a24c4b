package twofactor

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// The refusals, each with its own documented answer (the HTTP layer maps
// them to TwoFactorInvalid, TwoFactorExpired, TwoFactorThrottled, ...).
var (
	// ErrInvalidCode: the code is wrong, or right but used already.
	ErrInvalidCode = errors.New("two-factor code wrong or already used")
	// ErrNoStep: the browser holds no live pending second step (none,
	// expired, used, or out of attempts): the sign-in starts over.
	ErrNoStep = errors.New("no pending second step")
	// ErrThrottled: too many wrong codes for this user lately.
	ErrThrottled = errors.New("too many wrong two-factor codes: backing off")
	// ErrNotOn: the user has no two-factor in force.
	ErrNotOn = errors.New("two-factor is not on for this user")
	// ErrAlreadyOn: the user has two-factor in force already.
	ErrAlreadyOn = errors.New("two-factor is on already")
	// ErrEnrolFirst: the pending step is an enrolment, not a code.
	ErrEnrolFirst = errors.New("the pending second step is an enrolment")
	// ErrRequired: the policy requires two-factor for this user, so the
	// user may not turn it off (the admin's reset may).
	ErrRequired = errors.New("the two-factor policy requires it for this user")
)

// Limits and lifetimes. A pending step lives long enough to find a phone
// and type a code, and allows a handful of typos; after five wrong codes in
// a row (across steps and instances) a user's codes are refused for a
// while, doubling up to a quarter of an hour, which keeps guessing one of
// the three valid codes in a million hopeless.
const (
	StepLifetime   = 5 * time.Minute
	MaxAttempts    = 5
	freeFailures   = 5
	firstBackoff   = 30 * time.Second
	longestBackoff = 15 * time.Minute
	recoveryCount  = 10
)

// Service applies the second-factor rules. Its fields are its
// dependencies; it keeps no state between calls.
type Service struct {
	Store  Store
	Policy Policy
	// Issuer names the service in authenticator apps (the otpauth URI's
	// issuer).
	Issuer string
	// Hashes turns a recovery code into its stored hashes, one per secret:
	// the first is stored, any matches (secret rotation).
	Hashes func(code string) []string
	Now    func() time.Time
	Log    *slog.Logger

	secrets, steps, devices []securecookie.Codec
}

// New builds the service; secrets are the service's secrets, the first
// sealing and every one opening.
func New(store Store, policy Policy, issuer string, secrets []string, hashes func(string) []string, now func() time.Time, log *slog.Logger) (*Service, error) {
	s := &Service{Store: store, Policy: policy, Issuer: issuer, Hashes: hashes, Now: now, Log: log}
	var err error
	// The stored TOTP secret: no age limit (it lives as long as the row).
	if s.secrets, err = cookies.SealedCodecs(secrets, "latchkey two-factor secret", 0); err != nil {
		return nil, fmt.Errorf("two-factor: %w", err)
	}
	if s.steps, err = cookies.SealedCodecs(secrets, "latchkey second step", StepLifetime); err != nil {
		return nil, fmt.Errorf("two-factor: %w", err)
	}
	remember := policy.RememberFor
	if remember <= 0 {
		remember = time.Second // never sealed; a non-zero age keeps old cookies refused
	}
	if s.devices, err = cookies.SealedCodecs(secrets, "latchkey remembered device", remember); err != nil {
		return nil, fmt.Errorf("two-factor: %w", err)
	}
	return s, nil
}

// backoff is how long a user's codes are refused after failures wrong
// ones in a row.
func backoff(failures int) time.Duration {
	if failures < freeFailures {
		return 0
	}
	d := firstBackoff
	for i := freeFailures; i < failures && d < longestBackoff; i++ {
		d *= 2
	}
	return min(d, longestBackoff)
}
