package emailflow

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// maxLinkBindings is how many pending links one browser keeps bound: a few
// retries or addresses. The newest comes first and the oldest falls out;
// its link then still works, through the confirm page.
const maxLinkBindings = 5

// bindingPurpose names the binding cookie's keys (cookies.SealedCodecs).
const bindingPurpose = "latchkey e-mail link binding"

// linkBindings ties e-mail links to the browser that asked for them, so
// that only that browser signs in by merely opening one (signin.OpenLink).
// The tie is a cookie set by POST /signin/email holding a short id of each
// pending link's stored token hash, encrypted and authenticated with
// gorilla/securecookie (the cookie is latchkey's own; no client reads it).
//
// Its name follows the cookie dialect: {prefix}.email-binding, with
// __Secure- under https. The next-auth/authjs prefix keeps it with the
// other auth cookies wherever deployments single those out (proxies,
// consent lists, log redaction); next-auth has no cookie of that name, so
// nothing in a next-auth app reads it. __Secure- means only an https page
// can set it; not __Host-, which would force Path=/: the path is the base
// path, so only latchkey's own routes ever receive it.
type linkBindings struct {
	name   string
	path   string
	secure bool
	// codecs holds one codec per secret: the first encodes, any decodes, so
	// a secret rotation keeps the bindings made before it.
	codecs []securecookie.Codec
}

// linkBinding is one pending link in the cookie.
type linkBinding struct {
	ID      string `json:"i"` // bindingID of the link's stored token hash
	Expires int64  `json:"e"` // the link's expiry, Unix seconds
}

// newLinkBindings derives the binding cookie's keys from every secret.
func newLinkBindings(d Deps, providers map[string]signin.EmailProvider) (*linkBindings, error) {
	sec := ""
	if d.Base.Secure {
		sec = "__Secure-"
	}
	path := d.Base.Path
	if path == "" {
		path = "/"
	}
	lb := &linkBindings{name: sec + d.CookiePrefix + ".email-binding", path: path, secure: d.Base.Secure}
	// securecookie also refuses a value older than the longest link life.
	maxAge := defaultEmailMaxAge
	for _, p := range providers {
		maxAge = max(maxAge, p.MaxAge)
	}
	codecs, err := cookies.SealedCodecs(d.Secrets, bindingPurpose, maxAge)
	if err != nil {
		return nil, err
	}
	lb.codecs = codecs
	return lb, nil
}

// bindingID is what the cookie keeps of a stored token hash: 128 bits of
// its SHA-256, enough to tell links apart and short enough to keep five in
// a cookie sent with every request to the base path. The cookie is
// encrypted anyway; this only keeps it small.
func bindingID(tokenHash string) string {
	sum := sha256.Sum256([]byte(tokenHash))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// read is the browser's live bindings, newest first. Every cookie of the
// name counts (a browser may hold more than one, e.g. on other paths); one
// that fails to decrypt or verify under all the secrets, is too old or too
// long, counts as absent.
func (lb *linkBindings) read(r *http.Request, now time.Time) []linkBinding {
	var out []linkBinding
	seen := map[string]bool{}
	for _, c := range r.CookiesNamed(lb.name) {
		var entries []linkBinding
		if err := securecookie.DecodeMulti(lb.name, c.Value, &entries, lb.codecs...); err != nil {
			continue
		}
		for _, e := range entries {
			if e.Expires > now.Unix() && e.ID != "" && !seen[e.ID] {
				seen[e.ID] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// bound is signin.OpenedLink.Bound for this request.
func (lb *linkBindings) bound(r *http.Request, now time.Time) func(string) bool {
	entries := lb.read(r, now)
	return func(tokenHash string) bool {
		return indexOf(entries, bindingID(tokenHash)) >= 0
	}
}

// add binds a link just sent to this browser, keeping its other pending
// links up to maxLinkBindings.
func (lb *linkBindings) add(w http.ResponseWriter, r *http.Request, tokenHash string, expires, now time.Time) error {
	entries := append([]linkBinding{{ID: bindingID(tokenHash), Expires: expires.Unix()}}, lb.read(r, now)...)
	if len(entries) > maxLinkBindings {
		entries = entries[:maxLinkBindings]
	}
	// The new link's whole life, rounded up: the core read the clock a
	// moment before now, which must not shave a second off Max-Age.
	life := (expires.Sub(now) + time.Second - 1).Truncate(time.Second)
	return lb.write(w, entries, now, life)
}

// drop removes a redeemed link's binding, clearing the cookie when it was
// the last; a browser that held none gets no cookie at all.
func (lb *linkBindings) drop(w http.ResponseWriter, r *http.Request, tokenHash string, now time.Time) error {
	entries := lb.read(r, now)
	i := indexOf(entries, bindingID(tokenHash))
	if i < 0 {
		return nil
	}
	return lb.write(w, append(entries[:i], entries[i+1:]...), now, 0)
}

// write sets the cookie to entries (or clears it when there are none). It
// lives as long as the longest-lived link it binds, at least minAge: the
// newest link's max age, unless an older one came from a provider with a
// longer one.
func (lb *linkBindings) write(w http.ResponseWriter, entries []linkBinding, now time.Time, minAge time.Duration) error {
	c := &http.Cookie{Name: lb.name, Path: lb.path, HttpOnly: true, Secure: lb.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1}
	if len(entries) > 0 {
		value, err := securecookie.EncodeMulti(lb.name, entries, lb.codecs...)
		if err != nil {
			return fmt.Errorf("encode the link binding cookie: %w", err)
		}
		age := int64(minAge / time.Second)
		for _, e := range entries {
			age = max(age, e.Expires-now.Unix())
		}
		c.Value, c.MaxAge = value, int(age)
	}
	http.SetCookie(w, c)
	return nil
}

func indexOf(entries []linkBinding, id string) int {
	for i, e := range entries {
		if subtle.ConstantTimeCompare([]byte(e.ID), []byte(id)) == 1 {
			return i
		}
	}
	return -1
}
