// Package cookies names latchkey's cookies the way next-auth (v4) or Auth.js
// (v5) does, writes them with next-auth's attributes and value encoding, and
// splits large session cookies into chunks.
package cookies

// Names holds the cookie names for one style and scheme.
type Names struct {
	SessionToken string
	CallbackURL  string
	CSRF         string
	PKCE         string
	State        string
	Nonce        string
}

// NewNames returns the names for prefix "next-auth" or "authjs". Under https
// every name gets __Secure-, except CSRF which gets the stricter __Host-.
func NewNames(prefix string, secure bool) Names {
	sec, host := "", ""
	if secure {
		sec, host = "__Secure-", "__Host-"
	}
	return Names{
		SessionToken: sec + prefix + ".session-token",
		CallbackURL:  sec + prefix + ".callback-url",
		CSRF:         host + prefix + ".csrf-token",
		PKCE:         sec + prefix + ".pkce.code_verifier",
		State:        sec + prefix + ".state",
		Nonce:        sec + prefix + ".nonce",
	}
}
