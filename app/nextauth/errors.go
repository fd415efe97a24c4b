package nextauth

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
)

// signinErrors are shown on the sign-in page: GET /error bounces them there.
var signinErrors = map[signin.Code]bool{
	signin.CodeSignin: true, signin.CodeOAuthSignin: true, signin.CodeOAuthCallback: true,
	signin.CodeOAuthCreateAccount: true, signin.CodeEmailCreateAccount: true, signin.CodeCallback: true,
	signin.CodeOAuthAccountNotLinked: true, signin.CodeEmailSignin: true, signin.CodeCredentialsSignin: true,
	signin.CodeSessionRequired: true, signin.CodeWebAuthnVerification: true, signin.CodeTryLater: true,
}

// signinMessage is the message id of next-auth's sign-in page message for
// an error code ("" for none).
func signinMessage(code signin.Code) string {
	switch code {
	case "":
		return ""
	case signin.CodeSignin, signin.CodeOAuthSignin, signin.CodeOAuthCallback, signin.CodeOAuthCreateAccount,
		signin.CodeEmailCreateAccount, signin.CodeCallback:
		return "ErrorTryDifferentAccount"
	case signin.CodeOAuthAccountNotLinked:
		return "ErrorOAuthAccountNotLinked"
	case signin.CodeEmailSignin:
		return "ErrorEmailSignin"
	case signin.CodeCredentialsSignin:
		return "ErrorCredentialsSignin"
	case signin.CodeSessionRequired:
		return "ErrorSessionRequired"
	case signin.CodeWebAuthnVerification:
		return "ErrorWebAuthnVerification"
	case signin.CodeTryLater:
		return "BusyNow"
	case signin.CodeTwoFactorExpired:
		return "TwoFactorExpired"
	default:
		return "ErrorDefault"
	}
}

// errorPage is the status and text (message ids) of GET /error for a code
// (case-insensitive, as v4).
type errorPage struct {
	status  int
	heading string
	lines   []string
	signIn  bool
}

func errorPageFor(code signin.Code) errorPage {
	switch strings.ToLower(string(code)) {
	case "configuration":
		return errorPage{http.StatusInternalServerError, "ServerErrorHeading", []string{"ServerErrorLine1", "ServerErrorLine2"}, false}
	case "accessdenied":
		return errorPage{http.StatusForbidden, "AccessDeniedHeading", []string{"AccessDeniedLine1"}, true}
	case "verification":
		return errorPage{http.StatusForbidden, "VerificationHeading", []string{"VerificationLine1", "VerificationLine2"}, true}
	default:
		return errorPage{http.StatusOK, "ErrorHeading", nil, false}
	}
}

// countFailedSignIn counts a failure as a sign-in's outcome where a
// sign-in ends: a callback (OAuth or an e-mail link), or POST
// /signin/:provider when the attempt stops before the IdP or before any
// link exists. A link that was sent is counted only once redeemed (in
// afterSignIn, or here when it fails). The provider label is a configured
// id, the outcome a NextAuth error code: both bounded.
func (h *Handler) countFailedSignIn(c echo.Context, code signin.Code) {
	p, ok := h.providers.byID[c.Param("provider")]
	if !ok {
		return
	}
	switch route, _ := strings.CutPrefix(c.Path(), h.base.Path); {
	case route == "/callback/:provider",
		route == "/signin/:provider" && c.Request().Method == http.MethodPost:
		h.metrics.SignIn(p.ID, string(code))
	}
}
