package app

import (
	"net/http"
	"net/url"
	"strings"
)

// NextAuth error codes: the only failure vocabulary clients ever see. The
// internal cause is logged once and never shown.
const (
	ErrSignin                = "Signin"
	ErrOAuthSignin           = "OAuthSignin"
	ErrOAuthCallback         = "OAuthCallback"
	ErrOAuthCreateAccount    = "OAuthCreateAccount"
	ErrEmailCreateAccount    = "EmailCreateAccount"
	ErrCallback              = "Callback"
	ErrOAuthAccountNotLinked = "OAuthAccountNotLinked"
	ErrEmailSignin           = "EmailSignin"
	ErrCredentialsSignin     = "CredentialsSignin"
	ErrSessionRequired       = "SessionRequired"
	ErrAccessDenied          = "AccessDenied"
	ErrVerification          = "Verification"
	ErrConfiguration         = "Configuration"
)

// signinErrors are shown on the sign-in page: GET /error bounces them there.
var signinErrors = map[string]bool{
	ErrSignin: true, ErrOAuthSignin: true, ErrOAuthCallback: true, ErrOAuthCreateAccount: true,
	ErrEmailCreateAccount: true, ErrCallback: true, ErrOAuthAccountNotLinked: true,
	ErrEmailSignin: true, ErrCredentialsSignin: true, ErrSessionRequired: true,
}

// signinMessage is next-auth's sign-in page message for an error code.
func signinMessage(code string) string {
	switch code {
	case "":
		return ""
	case ErrSignin, ErrOAuthSignin, ErrOAuthCallback, ErrOAuthCreateAccount, ErrEmailCreateAccount, ErrCallback:
		return "Try signing in with a different account."
	case ErrOAuthAccountNotLinked:
		return "To confirm your identity, sign in with the same account you used originally."
	case ErrEmailSignin:
		return "The e-mail could not be sent."
	case ErrCredentialsSignin:
		return "Sign in failed. Check the details you provided are correct."
	case ErrSessionRequired:
		return "Please sign in to access this page."
	default:
		return "Unable to sign in."
	}
}

// errorPage is the status and text of GET /error for a code (case-insensitive, as v4).
type errorPage struct {
	status  int
	heading string
	lines   []string
	signIn  bool
}

func errorPageFor(code string) errorPage {
	switch strings.ToLower(code) {
	case "configuration":
		return errorPage{http.StatusInternalServerError, "Server error", []string{
			"There is a problem with the server configuration.",
			"Check the server logs for more information."}, false}
	case "accessdenied":
		return errorPage{http.StatusForbidden, "Access Denied", []string{
			"You do not have permission to sign in."}, true}
	case "verification":
		return errorPage{http.StatusForbidden, "Unable to sign in", []string{
			"The sign in link is no longer valid.",
			"It may have been used already or it may have expired."}, true}
	default:
		return errorPage{http.StatusOK, "Error", nil, false}
	}
}

// errorURL is where a failed action sends the browser: {base}/error?error=code.
func (a *App) errorURL(code string) string {
	return a.base.URL("/error") + "?error=" + url.QueryEscape(code)
}
