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

// Issue makes a new token, on the caller's stack: its 32 random bytes and
// their hash with the first secret, next-auth's sha256(token + secret) of
// the hex token. The token is hex(raw), the cookie value
// "hex(raw)|hex(sum)". A first visit's GET /session issues
// one, and cookies.HexPair writes its cookie line in one allocation.
func (s Signer) Issue() (raw, sum [sha256.Size]byte) {
	random.Read(raw[:])
	var buf [2 * maxCookieLen]byte // the hex token, then the secret; a longer secret makes append allocate
	token := hex.AppendEncode(buf[:0], raw[:])
	return raw, sha256.Sum256(append(token, s.secrets[0]...))
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

// hashIs reports whether sum is token's hash with secret, comparing in
// constant time. The hash is next-auth's plain sha256(token + secret) in
// hex, not an HMAC, so cookies stay interchangeable with next-auth's. It
// runs on every request that carries a CSRF cookie, so it hashes and
// hex-encodes on the stack.
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
