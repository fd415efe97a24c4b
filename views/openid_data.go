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
	// ShownTo is the signed-in user's id (hidden field "user"): the answer
	// counts for that user only, not for one who signed in since.
	ShownTo string
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

// isScopeID: a line of ScopeLines is a message id the catalogues have,
// not a scope shown as it is.
func isScopeID(line string) bool {
	for _, o := range scopeOrder {
		if o.id == line {
			return true
		}
	}
	return false
}

// scopeOrder are the scopes the pages name, in the order they list them,
// with their message ids.
var scopeOrder = []struct{ scope, id string }{
	{"openid", "ScopeOpenID"}, {"profile", "ScopeProfile"}, {"email", "ScopeEmail"}, {"groups", "ScopeGroups"},
	{"offline_access", "ScopeOfflineAccess"},
}

// ScopeLines are the lines a page lists for granted or asked-for scopes
// (OpenIDConsent.Scopes, AppItem.Scopes): the message ids of the scopes
// the pages name, in their order, then any other scope as it is, each
// once.
func ScopeLines(scopes []string) []string {
	has := make(map[string]bool, len(scopes))
	for _, s := range scopes {
		has[s] = true
	}
	var out []string
	named := map[string]bool{}
	for _, o := range scopeOrder {
		named[o.scope] = true
		if has[o.scope] {
			out = append(out, o.id)
		}
	}
	seen := map[string]bool{}
	for _, s := range scopes {
		if s != "" && !named[s] && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
