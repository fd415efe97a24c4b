// Package cookies names latchkey's cookies the way next-auth (v4) or Auth.js
// (v5) does, writes them with next-auth's attributes and value encoding, and
// splits large session cookies into chunks.
package cookies

// Names holds the cookie names for one style and scheme.
type Names struct {
	SessionToken string
	CallbackURL  string
	CSRF         string
	// OAuthCheck holds one OAuth sign-in attempt (its nonce, PKCE verifier,
	// OIDC nonce and provider) between the sign-in POST and the callback. It
	// replaces next-auth's pkce.code_verifier, state and nonce cookies and
	// has a name of its own because its format is latchkey's, not a JWE: a
	// next-auth deployment on the same host never mistakes it for its own.
	// It is narrowed to the base path, so under https it takes __Secure-
	// (__Host- requires Path=/).
	OAuthCheck string
	// SecondStep holds a sign-in whose first factor passed while it waits
	// for its second (app/twofactor: sealed, five minutes, base path).
	SecondStep string
	// Device remembers a browser that may skip the second step for a
	// user (sealed, two_factor.remember_device, base path).
	Device string
	// PasswordDevice tells the password throttle that this browser signed
	// in to an account before (sealed, 30 days, base path: OWASP's device
	// cookie, app/signin's Devices).
	PasswordDevice string
}

// NewNames returns the names for prefix "next-auth" or "authjs". Under https
// every name gets __Secure-, except CSRF which gets the stricter __Host-.
func NewNames(prefix string, secure bool) Names {
	sec, host := "", ""
	if secure {
		sec, host = "__Secure-", "__Host-"
	}
	return Names{
		SessionToken:   sec + prefix + ".session-token",
		CallbackURL:    sec + prefix + ".callback-url",
		CSRF:           host + prefix + ".csrf-token",
		OAuthCheck:     sec + prefix + ".oauth-check",
		SecondStep:     sec + prefix + ".second-step",
		Device:         sec + prefix + ".two-factor-device",
		PasswordDevice: sec + prefix + ".password-device",
	}
}
