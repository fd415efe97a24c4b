package events

import "time"

// The payloads' "data" objects. Field names are snake_case, as most
// webhook senders' are; docs/webhooks.md shows one of each.

// User is a user as events show it: no password, no tokens.
type User struct {
	ID            string     `json:"id"`
	Email         *string    `json:"email"`
	Name          *string    `json:"name"`
	Image         *string    `json:"image"`
	EmailVerified *time.Time `json:"email_verified"`
}

// UserChange is user.created (Provider: how the user first signed in)
// and user.updated (Changes: which fields changed).
type UserChange struct {
	User     User     `json:"user"`
	Provider string   `json:"provider,omitempty"`
	Changes  []string `json:"changes,omitempty"`
}

// Account is account.linked and account.unlinked.
type Account struct {
	UserID            string `json:"user_id"`
	Provider          string `json:"provider"`
	ProviderAccountID string `json:"provider_account_id,omitempty"`
	Type              string `json:"type,omitempty"`
	Actor             string `json:"actor,omitempty"`
}

// Session is session.created and session.ended. SessionID is the
// session's row id (database) or its sign-in record's id, the token's
// sid claim (jwt): never the token. Scope says which of the user's
// sessions ended: "one" (SessionID), "others" or "all". Strategy is
// "database" or "jwt", and empty when a revocation ended the user's
// sessions in whichever strategy is in use.
type Session struct {
	UserID    string   `json:"user_id"`
	SessionID string   `json:"session_id,omitempty"`
	Provider  string   `json:"provider,omitempty"`
	Methods   []string `json:"methods,omitempty"`
	Strategy  string   `json:"strategy,omitempty"`
	Scope     string   `json:"scope,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Actor     string   `json:"actor,omitempty"`
}

// Scopes and reasons of session.ended.
const (
	ScopeOne, ScopeOthers, ScopeAll = "one", "others", "all"

	ReasonSignOut           = "signout"
	ReasonRevoked           = "revoked"
	ReasonSignOutEverywhere = "signout_everywhere"
	ReasonPasswordChanged   = "password_changed"
	ReasonPasswordReset     = "password_reset"
)

// Subject is the events about one user that need nothing else
// (user.deleted, password.*, two_factor.*), with who acted when it says.
type Subject struct {
	UserID string `json:"user_id"`
	Actor  string `json:"actor,omitempty"`
	Method string `json:"method,omitempty"`
}

// Passkey is passkey.added and passkey.removed.
type Passkey struct {
	UserID    string `json:"user_id"`
	PasskeyID string `json:"passkey_id"`
	Name      string `json:"name,omitempty"`
	Actor     string `json:"actor,omitempty"`
}
