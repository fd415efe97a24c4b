package views

import (
	"strings"

	"github.com/a-h/templ"
)

// SecondStep is the data of the second-step page: the code after the first
// factor (or a step-up of the signed-in session).
type SecondStep struct {
	Page
	CSRFToken    string
	ActionURL    string // POST {base}/callback/two-factor
	CallbackURL  string // the sign-in's callbackUrl (hidden field "callbackUrl")
	RememberDays int    // 0: no "remember this device" checkbox
	StepUp       bool   // signed in already: the page asks to confirm with a code (different heading/lead text)
	Error        string // message id or "" ("TwoFactorRequired" is the lead text already: not shown as an error)
	SignInURL    string // "start over" link
}

// TwoFactorSetup is the enrolment page: the QR code, the secret as text,
// the confirm form.
type TwoFactorSetup struct {
	Page
	CSRFToken   string
	ActionURL   string // POST {base}/account/two-factor/enable
	CallbackURL string // hidden "callbackUrl" ("" when none)
	// QR is an inline <svg> the handler renders; the page wraps it in an
	// element with role="img" and the label TwoFactorQRLabel, so the svg
	// itself is best aria-hidden="true" (no fill or style attributes the
	// CSP would refuse: style-src 'self').
	QR       templ.Component
	Secret   string // base32, shown in groups of 4 (GroupSecret)
	URI      string // the otpauth:// URI, shown as text, never a link
	Required bool   // the policy requires two-factor before the sign-in can finish
	Error    string // message id or "" ("TwoFactorSetupRequired" is said by Required: not shown twice)
}

// TwoFactorSettings is the signed-in page when two-factor is on.
type TwoFactorSettings struct {
	Page
	CSRFToken     string
	Since         string // formatted date
	CodesLeft     int
	RegenerateURL string // POST {base}/account/two-factor/recovery-codes
	DisableURL    string // POST {base}/account/two-factor/disable (field "code": a current code or a recovery code)
	// Required: the policy requires two-factor for the user, so the page
	// says why it cannot be turned off instead of offering the form.
	Required      bool
	Notice, Error string // message ids
}

// RecoveryCodes is the page that shows a new set of recovery codes, once.
type RecoveryCodes struct {
	Page
	Codes       []string
	ContinueURL string // a link "Continue"
	Notice      string // message id or "": TwoFactorEnabledNotice, RecoveryCodesRegeneratedNotice
}

// GroupSecret is a base32 secret in groups of four characters ("JBSW Y3DP
// EHPK 3PXP"), for reading aloud and typing; authenticator apps ignore the
// spaces.
func GroupSecret(s string) string {
	s = strings.ToUpper(strings.TrimRight(strings.Join(strings.Fields(s), ""), "="))
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n > 0 && n%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// lowOnCodes: the settings page suggests a new set of recovery codes.
func lowOnCodes(left int) bool { return left <= 2 }

// shownError is the page's error message id, without the one the page
// already says in its lead text.
func shownError(id, said string) string {
	if id == said {
		return ""
	}
	return id
}
