package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"

	"github.com/latchkey-auth/latchkey/app/random"
)

// State is the OAuth state of one sign-in attempt:
// base64url(sha256(csrfToken|provider|attempt)), 43 URL-safe characters.
//
// The CSRF token ties the state to the browser's HttpOnly CSRF cookie, so a
// forged callback cannot carry the victim's state without it. The provider
// makes a state seen by one IdP worthless at another. The attempt is a fresh
// random value per sign-in, kept in the attempt's check cookie: it makes
// every state unique, so a state from an earlier or abandoned attempt (in
// IdP or proxy logs, in history) matches nothing, and since every callback
// spends the check cookie, a state works at most once.
func State(csrfToken, provider, attempt string) string {
	sum := sha256.Sum256([]byte(csrfToken + "|" + provider + "|" + attempt))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// StateMatches compares a returned state with the expected one in constant
// time. An empty CSRF token or attempt never matches.
func StateMatches(csrfToken, provider, attempt, returned string) bool {
	if csrfToken == "" || attempt == "" || returned == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(State(csrfToken, provider, attempt)), []byte(returned)) == 1
}

// RandomValue is an attempt nonce, PKCE verifier or OIDC nonce: base64url of
// 32 random bytes (43 characters), as openid-client generates them.
func RandomValue() string { return random.Base64URL(32) }
