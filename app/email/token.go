package email

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
)

// NewToken returns next-auth's default verification token: 32 random bytes
// as 64 lower-case hex characters.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate verification token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// HashToken is what the database stores instead of the token:
// sha256hex(token + secret), as next-auth's hashToken, so a leaked table
// cannot be turned into sign-in links and rows written by next-auth match.
func HashToken(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

// Link builds the sign-in link next-auth e-mails:
// {endpoint}?callbackUrl=...&token=...&email=..., in that order (v4 builds it
// with URLSearchParams, and clients compare the keys).
func Link(endpoint, callbackURL, token, identifier string) string {
	return endpoint + "?callbackUrl=" + url.QueryEscape(callbackURL) +
		"&token=" + url.QueryEscape(token) +
		"&email=" + url.QueryEscape(identifier)
}
