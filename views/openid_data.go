package views

// OpenIDConsent is the consent page of the OpenID Provider: an application
// (a client of latchkey) asks to sign the user in and to read some of
// their details.
type OpenIDConsent struct {
	Page
	CSRFToken  string
	ActionURL  string // POST {base}/oidc/consent
	RequestID  string // hidden field "id"
	ClientName string // the application's name (its id when it has none)
	ClientHost string // the host of the redirect URI the answer goes to, shown so the user knows where
	// Scopes are the message ids of what the application asks for, one
	// line each (ScopeOpenID, ScopeProfile, ScopeEmail, ScopeGroups,
	// ScopeOfflineAccess), in that order.
	Scopes []string
	// Account is who is signed in (e-mail, or name), with a link to use
	// another account (SwitchURL: the sign-in page, back to this request).
	Account   string
	SwitchURL string
	// The form posts decision=allow or decision=deny.
}

// OpenIDLogout is the page that confirms signing out when an application
// asks (RP-initiated logout) without proving which session it means.
type OpenIDLogout struct {
	Page
	CSRFToken  string
	ActionURL  string // POST {base}/oidc/logout
	Logout     string // hidden field "logout": the sealed request
	ClientName string // "" when the application is not known
	// The form posts decision=signout or decision=stay.
}

// scopeIDs are the message ids of the scopes the pages translate; any
// other scope (one an operator added) is shown as it is.
var scopeIDs = map[string]bool{
	"ScopeOpenID": true, "ScopeProfile": true, "ScopeEmail": true, "ScopeGroups": true, "ScopeOfflineAccess": true,
}

// isScopeID: scope is a message id the catalogues have, not a raw scope.
func isScopeID(scope string) bool { return scopeIDs[scope] }
