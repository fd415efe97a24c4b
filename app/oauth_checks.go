package app

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
)

// checkTTL is how long a sign-in may take at the IdP, as next-auth's 15 minutes.
const checkTTL = 15 * time.Minute

// checkCookies stores the PKCE verifier and the nonce between the sign-in
// POST and the callback, each as a JWE {value, provider} keyed by its cookie
// name (next-auth's format), so a value cannot be read, altered, moved to
// another cookie or used for another provider.
type checkCookies struct {
	writer cookies.Writer
	keys   map[string]*jwt.Key
}

func newCheckCookies(secret string, format jwt.Format, names cookies.Names, w cookies.Writer) (*checkCookies, error) {
	cc := &checkCookies{writer: w, keys: map[string]*jwt.Key{}}
	for _, name := range []string{names.PKCE, names.Nonce} {
		k, err := jwt.NewKey(secret, name, format)
		if err != nil {
			return nil, fmt.Errorf("check cookie key %s: %w", name, err)
		}
		cc.keys[name] = k
	}
	return cc, nil
}

// set writes value for provider into the named check cookie.
func (cc *checkCookies) set(w http.ResponseWriter, name, provider, value string, now time.Time) error {
	tok, err := cc.keys[name].Encode(map[string]any{"value": value, "provider": provider}, checkTTL, now)
	if err != nil {
		return fmt.Errorf("encode %s cookie: %w", name, err)
	}
	cc.writer.Set(w, name, tok, now.Add(checkTTL), checkTTL)
	return nil
}

// take reads and verifies the named check cookie for provider. It fails
// closed: missing, undecryptable, expired or another provider's → error.
func (cc *checkCookies) take(r *http.Request, name, provider string, now time.Time) (string, error) {
	raw, ok := cookies.Read(r, name)
	if !ok || raw == "" {
		return "", fmt.Errorf("%s cookie was missing", name)
	}
	claims, err := cc.keys[name].Decode(raw, now)
	if err != nil {
		return "", fmt.Errorf("%s cookie: %w", name, err)
	}
	value, _ := claims["value"].(string)
	owner, _ := claims["provider"].(string)
	if value == "" {
		return "", errors.New(name + " cookie has no value")
	}
	if subtle.ConstantTimeCompare([]byte(owner), []byte(provider)) != 1 {
		return "", fmt.Errorf("%s cookie was created for a different provider", name)
	}
	return value, nil
}
