package email

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"

	"github.com/latchkey-auth/latchkey/app/random"
)

// NewToken returns next-auth's default verification token: 32 random bytes
// as 64 lower-case hex characters.
func NewToken() string { return random.Hex(32) }

// HashToken is what the database stores instead of the token:
// sha256hex(token + secret), as next-auth's hashToken, so a leaked table
// cannot be turned into sign-in links and rows written by next-auth match.
func HashToken(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

// HashTokens is HashToken under every secret, the current one first: new
// rows store the first; a link from before a secret rotation matches a later one.
func HashTokens(token string, secrets []string) []string {
	out := make([]string, len(secrets))
	for i, s := range secrets {
		out[i] = HashToken(token, s)
	}
	return out
}

// Link builds the sign-in link next-auth e-mails:
// {endpoint}?callbackUrl=...&token=...&email=..., in that order (v4 builds it
// with URLSearchParams, and clients compare the keys).
func Link(endpoint, callbackURL, token, identifier string) string {
	return endpoint + "?callbackUrl=" + url.QueryEscape(callbackURL) +
		"&token=" + url.QueryEscape(token) +
		"&email=" + url.QueryEscape(identifier)
}
