package signin

import (
	"errors"
	"fmt"
)

// Code is a NextAuth.js error code: the only failure vocabulary a client
// ever sees, in `?error=` of a redirect or the error page.
type Code string

// The NextAuth.js v4 error codes latchkey answers with.
const (
	CodeSignin                Code = "Signin"
	CodeOAuthSignin           Code = "OAuthSignin"
	CodeOAuthCallback         Code = "OAuthCallback"
	CodeOAuthCreateAccount    Code = "OAuthCreateAccount"
	CodeEmailCreateAccount    Code = "EmailCreateAccount"
	CodeCallback              Code = "Callback"
	CodeOAuthAccountNotLinked Code = "OAuthAccountNotLinked"
	CodeEmailSignin           Code = "EmailSignin"
	CodeCredentialsSignin     Code = "CredentialsSignin"
	CodeSessionRequired       Code = "SessionRequired"
	CodeAccessDenied          Code = "AccessDenied"
	CodeVerification          Code = "Verification"
	CodeConfiguration         Code = "Configuration"
	// CodeWebAuthnVerification is Auth.js v5's: a passkey answer refused.
	CodeWebAuthnVerification Code = "WebAuthnVerificationError"
	// CodeTryLater is latchkey's own, next-auth has none: a password
	// sign-in found every hashing slot taken (password.ErrBusy), or the
	// rate-limit counters of a sign-in (the password throttle, the e-mail
	// limits) could not be reached in the database. It is told apart from
	// CredentialsSignin and EmailSignin so that a user with the right
	// password or address is not told it is wrong; it says nothing about
	// the account.
	CodeTryLater Code = "TryLater"

	// latchkey's own two-factor codes (next-auth has no second factor;
	// docs/compatibility.md): the first factor passed and a code is
	// needed (TwoFactorRequired) or, under a policy that requires
	// two-factor, an enrolment (TwoFactorSetupRequired); a code was wrong
	// or used already (TwoFactorInvalid); the pending second step is gone —
	// expired, used, out of attempts — and the sign-in starts over
	// (TwoFactorExpired); too many wrong codes lately (TwoFactorThrottled).
	CodeTwoFactorRequired      Code = "TwoFactorRequired"
	CodeTwoFactorSetupRequired Code = "TwoFactorSetupRequired"
	CodeTwoFactorInvalid       Code = "TwoFactorInvalid"
	CodeTwoFactorExpired       Code = "TwoFactorExpired"
	CodeTwoFactorThrottled     Code = "TwoFactorThrottled"
)

// Error is a refused or failed sign-in step: the code the client sees and
// the cause the operator reads in the log (never shown, may name internals).
// Redirect, when set, is where the SignIn hook chose to send the user
// instead of the error page.
type Error struct {
	Code     Code
	Cause    error
	Redirect string
}

func (e *Error) Error() string {
	if e.Cause == nil {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Cause.Error()
}

func (e *Error) Unwrap() error { return e.Cause }

// Fail wraps cause with the code the client will see.
func Fail(code Code, cause error) error { return &Error{Code: code, Cause: cause} }

// Failf is Fail with a formatted cause.
func Failf(code Code, format string, args ...any) error {
	return &Error{Code: code, Cause: fmt.Errorf(format, args...)}
}

// CodeOf is the code of err: its own when it is an *Error, else
// Configuration (an unexpected failure is the server's problem).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeConfiguration
}
