// Package csrf implements next-auth's double-submit CSRF token: a random
// token in a signed, HttpOnly, host-only cookie that every POST must echo in
// its csrfToken form field.
package csrf

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	"github.com/latchkey-auth/latchkey/app/random"
)

// maxCookieLen bounds the work done on a hostile cookie (64 + 1 + 64 is normal).
const maxCookieLen = 256

// Signer makes and checks CSRF cookie values with the service secret.
type Signer struct {
	secrets []string
}

// NewSigner returns a Signer that signs with the first secret and accepts
// a cookie signed with any of them (secret rotation).
func NewSigner(secrets ...string) Signer { return Signer{secrets: secrets} }

// New returns a fresh token and its cookie value "token|sha256hex(token+secret)".
func (s Signer) New() (token, cookieValue string) {
	token = random.Hex(32)
	return token, token + "|" + hash(token, s.secrets[0])
}

// Parse returns the token in a (percent-decoded) cookie value when its hash
// matches; anything else — missing "|", wrong hash, odd length — is !ok.
func (s Signer) Parse(cookieValue string) (token string, ok bool) {
	token, sum, found := strings.Cut(cookieValue, "|")
	if !found {
		return "", false
	}
	return s.ParseParts(token, sum)
}

// ParseParts is Parse for a cookie value already cut at its first "|":
// the token when sum is its hash.
func (s Signer) ParseParts(token, sum string) (string, bool) {
	if len(token)+1+len(sum) > maxCookieLen || token == "" {
		return "", false
	}
	for _, secret := range s.secrets {
		if hashIs(sum, token, secret) {
			return token, true
		}
	}
	return "", false
}

// Verify reports whether the submitted form token equals the cookie token,
// in constant time; an empty cookie token never verifies.
func Verify(cookieToken, formToken string) bool {
	if cookieToken == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(cookieToken), []byte(formToken)) == 1
}

// hash is next-auth's plain sha256(token + secret), not an HMAC, so cookies
// stay interchangeable with next-auth's.
func hash(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

// hashIs reports whether sum is hash(token, secret), comparing in constant
// time. It runs on every request that carries a CSRF cookie, so it hashes
// and hex-encodes on the stack instead of allocating hash's strings.
func hashIs(sum, token, secret string) bool {
	var buf [2 * maxCookieLen]byte // token is shorter than maxCookieLen; a longer secret makes append allocate
	sha := sha256.Sum256(append(append(buf[:0], token...), secret...))
	var want [2 * sha256.Size]byte
	hex.Encode(want[:], sha[:])
	if len(sum) != len(want) {
		return false
	}
	var diff byte
	for i := range want {
		diff |= sum[i] ^ want[i]
	}
	return subtle.ConstantTimeByteEq(diff, 0) == 1
}
