package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// State is the OAuth state for a CSRF token: sha256 hex of the token, as
// latchkey's mission (and next-auth v3) define it. The callback recomputes it
// from the CSRF cookie, so no state cookie is needed, and a forged callback
// cannot carry the victim's state without the victim's HttpOnly cookie.
func State(csrfToken string) string {
	sum := sha256.Sum256([]byte(csrfToken))
	return hex.EncodeToString(sum[:])
}

// StateMatches compares a returned state with the expected one in constant time.
func StateMatches(csrfToken, returned string) bool {
	if csrfToken == "" || returned == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(State(csrfToken)), []byte(returned)) == 1
}

// RandomValue is a PKCE verifier or nonce: base64url of 32 random bytes
// (43 characters), as openid-client generates them.
func RandomValue() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}
