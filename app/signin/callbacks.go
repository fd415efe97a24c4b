package signin

import (
	"context"
	"strings"

	"github.com/latchkey-auth/latchkey/app/config"
	mail "github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/models"
)

// This file is latchkey's answer to next-auth's `callbacks` option: edit the
// four functions in DefaultHooks to change who may sign in, where users land,
// and what the session object and JWT contain. The defaults are next-auth's,
// plus the two options users ask for most (config.yaml `callbacks:`).

// Hooks are the four next-auth callbacks.
type Hooks struct {
	// SignIn decides whether a user may sign in. Return false for AccessDenied,
	// or a non-empty redirect to send the user elsewhere (it is validated).
	SignIn func(ctx context.Context, in SignInInput) (allow bool, redirectTo string)
	// Redirect maps a requested callbackUrl; the redirect policy still
	// validates the result, so a hook cannot open a redirect.
	Redirect func(url, baseURL string) string
	// Session shapes the client-safe object returned by GET /session.
	Session func(s SessionObject, in SessionInput) SessionObject
	// JWT shapes the token stored in the cookie (jwt strategy only).
	JWT func(token map[string]any, in JWTInput) map[string]any
}

// SignInInput is what SignIn sees.
type SignInInput struct {
	User     models.User
	Provider string
	Type     string // "oauth", "oidc", "email" or "credentials"
	Email    string // the profile's address (OAuth), the address being verified (e-mail) or signing in (credentials)
	// EmailVerified says the provider vouches for Email: always for an
	// e-mail sign-in (the link proves it), per provider for OAuth.
	EmailVerified bool
	// VerificationRequest is true when an e-mail link is about to be sent.
	VerificationRequest bool
}

// SessionObject is the client-safe session, as next-auth's.
type SessionObject struct {
	User    SessionUser `json:"user"`
	Expires string      `json:"expires"`
	// Error is "RefreshAccessTokenError" while one of the user's provider
	// accounts needs a new sign-in (its refresh token was refused; the
	// name next-auth's rotation guide gives session.error), else empty.
	Error string `json:"error,omitempty"`
}

// SessionUser is the user part of SessionObject. ID is only set with
// callbacks.expose_user_id.
type SessionUser struct {
	ID    string  `json:"id,omitempty"`
	Name  *string `json:"name"`
	Email *string `json:"email"`
	Image *string `json:"image"`
}

// SessionInput is what Session sees: the database user (database strategy)
// or the token (jwt strategy), and the data of a POST /session update.
type SessionInput struct {
	UserID  string
	Token   map[string]any
	Trigger string // "update" for POST /session
	Update  []byte // raw JSON "data" of the update, if any
}

// JWTInput is what JWT sees. User is set at sign-in only.
type JWTInput struct {
	User      *models.User
	Provider  string
	Trigger   string // "signIn", "signUp", "update" or ""
	IsNewUser bool
	Update    []byte // raw JSON "data" of POST /session
}

// DefaultHooks are next-auth's default callbacks plus the config options.
func DefaultHooks(cfg config.Callbacks) Hooks {
	domains := map[string]bool{}
	for _, d := range cfg.AllowedEmailDomains {
		domains[strings.ToLower(strings.TrimPrefix(d, "@"))] = true
	}
	return Hooks{
		SignIn: func(_ context.Context, in SignInInput) (bool, string) {
			if len(domains) == 0 {
				return true, ""
			}
			email, verified := in.Email, in.EmailVerified
			if email == "" && in.User.Email != nil {
				email, verified = *in.User.Email, in.User.EmailVerified != nil
			}
			if !verified {
				// Anyone can type an address at a provider that does not
				// check it: it proves nothing about the domain.
				return false, ""
			}
			// The domain in ASCII, as config writes the list; an
			// address whose domain is no name is on no list.
			addr, ok := mail.Comparable(email)
			return ok && domains[addr[strings.LastIndexByte(addr, '@')+1:]], ""
		},
		Redirect: func(url, _ string) string { return url },
		Session: func(s SessionObject, in SessionInput) SessionObject {
			if cfg.ExposeUserID {
				s.User.ID = in.UserID
			}
			return s
		},
		JWT: func(token map[string]any, _ JWTInput) map[string]any { return token },
	}
}

// With returns h with every non-nil hook of o in place of its own.
func (h Hooks) With(o Hooks) Hooks {
	if o.SignIn != nil {
		h.SignIn = o.SignIn
	}
	if o.Redirect != nil {
		h.Redirect = o.Redirect
	}
	if o.Session != nil {
		h.Session = o.Session
	}
	if o.JWT != nil {
		h.JWT = o.JWT
	}
	return h
}
