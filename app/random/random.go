// Package random makes every unguessable value latchkey issues: CSRF and
// e-mail tokens, PKCE verifiers, nonces, session tokens and row ids. One
// place, one source (crypto/rand), so no caller can pick a weaker one.
//
// crypto/rand.Read never returns an error (since Go 1.24 it crashes the
// program if the system's generator fails rather than return fewer
// bytes), so none of these functions has an error to report.
package random

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"

	"github.com/google/uuid"
)

// Bytes returns n random bytes.
func Bytes(n int) []byte {
	b := make([]byte, n)
	Read(b)
	return b
}

// Read fills b with random bytes: for a caller that keeps them on its
// stack (a CSRF token, issued on every first visit).
func Read(b []byte) {
	_, _ = rand.Read(b) // documented never to fail; see the package comment
}

// Hex is n random bytes as 2n lower-case hex characters.
func Hex(n int) string { return hex.EncodeToString(Bytes(n)) }

// Base64URL is n random bytes in unpadded base64url.
func Base64URL(n int) string { return base64.RawURLEncoding.EncodeToString(Bytes(n)) }

// UUID is a random (version 4) UUID string: row ids and database session tokens.
func UUID() string { return uuid.NewString() }
