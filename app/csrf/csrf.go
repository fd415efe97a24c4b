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

// HexLen is the length of a token and of its hash: 32 bytes in hex.
const HexLen = 2 * sha256.Size

// Signer makes and checks CSRF cookie values with the service secret.
type Signer struct {
	secrets []string
}

// NewSigner returns a Signer that signs with the first secret and accepts
// a cookie signed with any of them (secret rotation).
func NewSigner(secrets ...string) Signer { return Signer{secrets: secrets} }

// New returns a fresh token and its cookie value "token|sha256hex(token+secret)".
func (s Signer) New() (token, cookieValue string) {
	tok, sum := s.Issue()
	return string(tok[:]), string(tok[:]) + "|" + string(sum[:])
}

// Issue is New without its strings: a fresh token and its hash with the
// first secret, both in hex, on the caller's stack. A first visit's
// GET /session issues one, and its cookie line can then be the only
// allocation (cookies.Pair).
func (s Signer) Issue() (token, sum [HexLen]byte) {
	var raw [HexLen / 2]byte
	random.Read(raw[:])
	hex.Encode(token[:], raw[:])
	var buf [2 * maxCookieLen]byte // a longer secret makes append allocate
	return token, hexSum(append(append(buf[:0], token[:]...), s.secrets[0]...))
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

// hexSum is next-auth's hash of a token, sha256(token + secret) in hex
// (a plain hash, not an HMAC, so cookies stay interchangeable with
// next-auth's), of data = token + secret.
func hexSum(data []byte) (out [HexLen]byte) {
	sha := sha256.Sum256(data)
	hex.Encode(out[:], sha[:])
	return out
}

// hashIs reports whether sum is the hash of token with secret (hexSum), comparing in constant
// time. It runs on every request that carries a CSRF cookie, so it hashes
// and hex-encodes on the stack instead of allocating hash's strings.
func hashIs(sum, token, secret string) bool {
	var buf [2 * maxCookieLen]byte // token is shorter than maxCookieLen; a longer secret makes append allocate
	want := hexSum(append(append(buf[:0], token...), secret...))
	if len(sum) != len(want) {
		return false
	}
	var diff byte
	for i := range want {
		diff |= sum[i] ^ want[i]
	}
	return subtle.ConstantTimeByteEq(diff, 0) == 1
}
