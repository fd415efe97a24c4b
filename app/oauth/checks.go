package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"

	"github.com/latchkey-auth/latchkey/app/random"
)

// State is the OAuth state for a CSRF token: a SHA-256 hash of the token
// (as next-auth v3 made it, so a state proves the browser's CSRF cookie), bound to the provider id so a
// state seen by one IdP is worthless at another. The callback recomputes it
// from the CSRF cookie, so no state cookie is needed, and a forged callback
// cannot carry the victim's state without the victim's HttpOnly cookie. The
// CSRF token is rotated at every sign-in, which retires old states.
func State(csrfToken, provider string) string {
	sum := sha256.Sum256([]byte(csrfToken + "|" + provider))
	return hex.EncodeToString(sum[:])
}

// StateMatches compares a returned state with the expected one in constant time.
func StateMatches(csrfToken, provider, returned string) bool {
	if csrfToken == "" || returned == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(State(csrfToken, provider)), []byte(returned)) == 1
}

// RandomValue is a PKCE verifier or nonce: base64url of 32 random bytes
// (43 characters), as openid-client generates them.
func RandomValue() string { return random.Base64URL(32) }
