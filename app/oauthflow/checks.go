package oauthflow

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// checkTTL is how long a sign-in may take at the IdP, as next-auth's 15 minutes.
const checkTTL = 15 * time.Minute

// spentMemory is how many spent attempts one instance remembers, the
// oldest forgotten first: more than 36 callbacks a second for all of
// checkTTL, in about 6 MB when full. A forgotten attempt still needs its
// cleared cookie and rotated CSRF token back to be replayed.
const spentMemory = 1 << 15

// checkPurpose names the check cookie's keys (cookies.SealedCodecs).
const checkPurpose = "latchkey oauth-check cookie"

// oauthCheck is one OAuth sign-in attempt, kept in the browser from the
// sign-in POST to the callback.
type oauthCheck struct {
	Attempt  string `json:"attempt"`            // random; bound into the state (oauth.State)
	Verifier string `json:"verifier,omitempty"` // PKCE code_verifier
	Nonce    string `json:"nonce,omitempty"`    // OIDC nonce
	Provider string `json:"provider"`           // the provider the attempt is for
	Lang     string `json:"lang,omitempty"`     // the lang the sign-in was asked in (web.Kit.ExplicitLang), for the callback's pages and notice
	Created  int64  `json:"created"`            // Unix seconds, by the app's clock
}

// checkCookies keeps the browser's one OAuth attempt in the check cookie,
// sealed by gorilla/securecookie: AES-256-CTR encrypted, then an HMAC-SHA256
// over the cookie's name, a timestamp and the value, so it can be neither
// read, altered, moved to another cookie name, nor kept past checkTTL. It is
// sealed under the first secret and opened under any configured one, so a
// sign-in in flight survives a secret rotation.
//
// Every callback spends the attempt, whatever its outcome: the callback
// clears the cookie (the browser forgets it), and take remembers the
// attempt (a replay of the whole request, cookies included, or a second
// callback racing the first, fails on this instance too).
type checkCookies struct {
	name   string
	writer cookies.Writer
	codecs []securecookie.Codec
	spent  *lru.Cache[string, struct{}]
}

// newCheckCookies derives one key pair per secret (the first seals) and
// narrows the cookie to the base path, the only place that reads it.
func newCheckCookies(secrets []string, name, path string, w cookies.Writer) (*checkCookies, error) {
	codecs, err := cookies.SealedCodecs(secrets, checkPurpose, checkTTL)
	if err != nil {
		return nil, err
	}
	spent, err := lru.New[string, struct{}](spentMemory)
	if err != nil {
		return nil, fmt.Errorf("check cookie: %w", err)
	}
	w.Path = path
	return &checkCookies{name: name, writer: w, codecs: codecs, spent: spent}, nil
}

// set seals chk into the check cookie, replacing any earlier attempt.
func (cc *checkCookies) set(w http.ResponseWriter, chk oauthCheck, now time.Time) error {
	v, err := cc.codecs[0].Encode(cc.name, chk) // the first secret seals
	if err != nil {
		return fmt.Errorf("seal %s cookie: %w", cc.name, err)
	}
	cc.writer.Set(w, cc.name, v, now.Add(checkTTL), checkTTL)
	return nil
}

// take opens the check cookie at provider's callback and spends its
// attempt. It fails closed: missing, unreadable or altered, sealed under no
// configured secret, spent already, older than checkTTL by the app's clock,
// or another provider's → error.
func (cc *checkCookies) take(r *http.Request, provider string, now time.Time) (oauthCheck, error) {
	var chk oauthCheck
	raw, ok := cookies.Read(r, cc.name)
	if !ok || raw == "" {
		return chk, fmt.Errorf("%s cookie was missing", cc.name)
	}
	if err := securecookie.DecodeMulti(cc.name, raw, &chk, cc.codecs...); err != nil {
		return oauthCheck{}, fmt.Errorf("%s cookie: %w", cc.name, err)
	}
	if chk.Attempt == "" {
		return oauthCheck{}, fmt.Errorf("%s cookie has no attempt", cc.name)
	}
	if found, _ := cc.spent.ContainsOrAdd(chk.Attempt, struct{}{}); found {
		return oauthCheck{}, fmt.Errorf("%s cookie: attempt already used", cc.name)
	}
	if now.Sub(time.Unix(chk.Created, 0)) > checkTTL {
		return oauthCheck{}, fmt.Errorf("%s cookie expired", cc.name)
	}
	if subtle.ConstantTimeCompare([]byte(chk.Provider), []byte(provider)) != 1 {
		return oauthCheck{}, fmt.Errorf("%s cookie was created for a different provider", cc.name)
	}
	return chk, nil
}

// clear expires the check cookie in the browser.
func (cc *checkCookies) clear(w http.ResponseWriter) { cc.writer.Clear(w, cc.name) }
