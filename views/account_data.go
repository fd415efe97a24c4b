package views

import "strconv"

// Account is the data of the account page ({base}/account): who the user
// is, how they sign in, their sessions, and the forms that change them.
// A URL left "" hides the part it leads to.
type Account struct {
	Page
	CSRFToken     string
	Name, Email   string // "" when none
	EmailVerified bool
	Created       string // formatted date

	// Sign-in methods.
	Linked       []LinkedAccount
	CanLink      []LinkOption // OAuth providers not linked yet: a "Link" form each (POST LinkURL, provider=ID)
	LinkURL      string       // POST {base}/link-account
	UnlinkURL    string       // POST {base}/unlink-account (id)
	HasPassword  bool
	PasswordURL  string // "" when the password pages are off
	PasskeysURL  string // "" when no passkey provider
	PasskeyCount int
	TwoFactorURL string // "" when two-factor is off
	TwoFactorOn  bool

	// Sessions.
	Sessions        []SessionItem
	RevokeURL       string // POST {base}/revoke-session (id)
	RevokeOthersURL string // POST {base}/revoke-other-sessions

	// Apps are the applications the user let sign them in (the OpenID
	// Provider's consents), each with a "Revoke access" form (POST
	// RevokeAppURL, clientId). RevokeAppURL is POST {base}/revoke-app; ""
	// hides the part (the OpenID Provider is off).
	Apps         []AppItem
	RevokeAppURL string

	// ChangeEmailURL is POST {base}/change-email (email); "" when no e-mail
	// provider (nothing could send the link).
	ChangeEmailURL string

	// DeleteURL is POST {base}/delete-user (confirm); "" when self-deletion
	// is off. DeleteConfirmWord is what the user types: the address, or
	// "DELETE" for a user without one.
	DeleteURL         string
	DeleteConfirmWord string

	Notice, Error string // message ids
	// Count is the {{.Count}} of the notice OtherSessionsEnded: how many
	// sessions ended.
	Count int
}

// LinkedAccount is one linked OAuth/OIDC identity.
type LinkedAccount struct {
	ID           string
	ProviderName string
	Label        string // the provider-side e-mail or login ("" none)
	Linked       string // formatted date
}

// LinkOption is a provider the user can still link.
type LinkOption struct{ ID, Name string }

// SessionItem is one live session of the user.
type SessionItem struct {
	ID       string
	Device   string // "Firefox 128 on Linux"; "" unknown
	Network  string // a coarse hint: "203.0.113.0/24"; "" unknown
	Started  string // formatted date and time
	LastSeen string // formatted; "" unknown
	Current  bool   // the session of this request: no End form
}

// AppItem is one application the user consented to.
type AppItem struct {
	ClientID string
	Name     string   // the application's name (its id when it has none)
	Scopes   []string // message ids (ScopeOpenID, ...); a scope without one as it is
	Since    string   // formatted date
}

// EmailChangeConfirm is the page the e-mail change link opens: the new
// address and a button (POST ActionURL with token). Opening it changes
// nothing, so mail scanners that fetch the link do no harm.
type EmailChangeConfirm struct {
	Page
	CSRFToken, ActionURL, Token, NewEmail string
	Error                                 string // message id, or ""
}

// hasOtherSessions: the page offers "End all other sessions".
func hasOtherSessions(s []SessionItem) bool {
	for _, it := range s {
		if !it.Current {
			return true
		}
	}
	return false
}

// message is the page's notice or error id with the values of the
// placeholders those messages have: {{.Count}} (OtherSessionsEnded) and
// {{.Word}} (DeleteConfirmation).
func (d Account) message(id string) string {
	kv := []string{"Count", strconv.Itoa(d.Count), "Word", d.DeleteConfirmWord}
	return d.T(id, kv...)
}
