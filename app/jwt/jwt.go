// Package jwt encodes and decodes the encrypted session tokens (JWE) that
// next-auth v4 and Auth.js v5 (@auth/core) put in their cookies, byte-for-byte
// compatible with both, so latchkey can read and write the same cookies as a
// Node deployment of either library.
//
// A token is a compact JWE with "alg":"dir" — the content key is derived from
// the application secret with HKDF, nothing is wrapped — and a JSON claims
// set as payload. The package never logs: callers decide what to report.
package jwt

import (
	"errors"
	"fmt"
)

// Format selects the token dialect. The two are not interchangeable: they use
// different HKDF parameters and content encryption.
type Format int

const (
	// V4 is next-auth v4: {"alg":"dir","enc":"A256GCM"}, 32-byte key.
	V4 Format = iota
	// V5 is @auth/core (Auth.js v5): {"alg":"dir","enc":"A256CBC-HS512","kid":…},
	// 64-byte key, salt = cookie name.
	V5
)

func (f Format) String() string {
	switch f {
	case V4:
		return "V4"
	case V5:
		return "V5"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ErrInvalid is wrapped by every Decode failure, so callers can treat any bad
// cookie as "no session" with a single errors.Is check.
var ErrInvalid = errors.New("jwt: invalid token")

// ErrExpired is the Decode error for a token past exp (+15 s tolerance). It
// wraps ErrInvalid; it exists so callers can tell routine expiry apart from
// tampering or a rotated secret when they log.
var ErrExpired = fmt.Errorf("%w: expired", ErrInvalid)

// invalid builds a Decode error with a fixed reason. Reasons are constant
// strings on purpose: no token bytes or library messages reach the caller,
// who may log the error.
func invalid(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalid, reason)
}

// The Decode errors of the common paths, built once: rejecting junk and
// trying an older rotation secret cost no allocation.
var (
	errUninitialised = invalid("key not initialised with NewKey")
	errNotCompact    = invalid("not a compact dir JWE")
	errHeader        = invalid("malformed or unsupported header")
	errIVOrTag       = invalid("bad iv or tag length")
	errMalformed     = invalid("malformed segment")
	errDecrypt       = invalid("decryption failed")
	errNotUTF8       = invalid("payload is not UTF-8")
	errNotObject     = invalid("payload is not a JSON object")
	errIat           = invalid("iat is not a number")
	errNbf           = invalid("nbf is not a number")
	errNotYetValid   = invalid("not yet valid")
	errExp           = invalid("exp missing or not a number")
)

// clockTolerance matches next-auth and @auth/core (jose jwtDecrypt
// clockTolerance: 15).
const clockTolerance = 15

// maxTokenLen bounds the work an unauthenticated caller can cause. Real
// session tokens are a few hundred bytes to a few KiB (browsers cap a cookie
// header well below this even with chunking).
const maxTokenLen = 64 << 10

// maxHeaderLen bounds the protected header segment. Ours is at most ~180
// characters; the bound keeps go-jose from parsing attacker-supplied
// certificate chains or JWKs in a header before any authentication.
const maxHeaderLen = 1024
