// Package redirect decides where latchkey may send a browser. Every
// callbackUrl (form, query, cookie) and every redirect target passes Policy.Resolve.
package redirect

import (
	"net/url"
	"strings"

	"github.com/latchkey-auth/latchkey/app/config/weborigin"
)

// maxLen bounds what we are willing to parse.
const maxLen = 2048

// Policy keeps targets on the service's origin or an allow-listed origin.
type Policy struct {
	origin  string
	allowed map[string]bool
	// plainOrigin: origin is scheme://host[:port] in plain lower-case
	// ASCII, so sameOrigin may shortcut Resolve.
	plainOrigin bool
}

// NewPolicy builds a policy for the service origin (scheme://host[:port]) and extra allowed origins.
func NewPolicy(origin string, allowed []string) Policy {
	origin = strings.ToLower(strings.TrimRight(origin, "/"))
	p := Policy{origin: origin, allowed: map[string]bool{key(origin): true}, plainOrigin: plain(origin)}
	for _, o := range allowed {
		p.allowed[key(o)] = true
	}
	return p
}

// key is an origin as new URL() writes it (weborigin.Normal: lower-case
// ASCII host, https://x:443 is https://x), the form originOf gives;
// one that is not an http(s) origin is kept lower-case, so no target
// matches it.
func key(origin string) string {
	if o, ok := weborigin.Normal(origin); ok {
		return o
	}
	return strings.ToLower(strings.TrimRight(origin, "/"))
}

// Origin is the fallback target (next-auth's baseUrl).
func (p Policy) Origin() string { return p.origin }

// Resolve returns an absolute URL for target: a relative path with a single
// leading "/" is joined to the origin; an absolute http(s) URL on an allowed
// origin is kept; anything else (//host, /\host, javascript:, bare words,
// control characters, other origins) falls back to the origin. ok says
// whether target was accepted as given.
func (p Policy) Resolve(target string) (resolved string, ok bool) {
	if p.sameOrigin(target) {
		return target, true
	}
	return p.resolve(target)
}

// sameOrigin is Resolve's shortcut for the usual target, the callback-url
// cookie of every request: the service's origin exactly as configured,
// alone or followed by a path (and query) of printable ASCII without "%",
// "#" or "\". url.Parse accepts any such URL and finds the origin's scheme
// and host in it, no user info and no opaque part, so resolve would keep
// it as it is; a test holds the two to that. Anything else takes the full
// check.
func (p Policy) sameOrigin(target string) bool {
	rest, ok := strings.CutPrefix(target, p.origin)
	if !ok || !p.plainOrigin || len(target) > maxLen || rest != "" && rest[0] != '/' {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c <= ' ' || c >= 0x7f || c == '%' || c == '#' || c == '\\' {
			return false
		}
	}
	return true
}

// plain reports whether origin is http(s)://host[:port] with a host of
// lower-case letters, digits, dots and dashes.
func plain(origin string) bool {
	host, ok := strings.CutPrefix(origin, "https://")
	if !ok {
		host, ok = strings.CutPrefix(origin, "http://")
	}
	if !ok || host == "" {
		return false
	}
	host, port, hasPort := strings.Cut(host, ":")
	if host == "" || hasPort && port == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// resolve is the full check.
func (p Policy) resolve(target string) (resolved string, ok bool) {
	if target == "" || len(target) > maxLen || hasControl(target) || strings.Contains(target, `\`) {
		return p.origin, false
	}
	if target[0] == '/' {
		if len(target) > 1 && target[1] == '/' {
			return p.origin, false
		}
		u, err := url.Parse(p.origin + target)
		if err != nil || originOf(u) != key(p.origin) {
			return p.origin, false
		}
		return p.origin + target, true
	}
	u, err := url.Parse(target)
	if err != nil || u.Opaque != "" || u.User != nil {
		return p.origin, false
	}
	if o := originOf(u); o != "" && p.allowed[o] {
		// A Unicode host goes out as new URL() writes it, in ASCII: the
		// same place, in a Location header that is plain ASCII.
		return weborigin.ASCIIHostURL(target), true
	}
	return p.origin, false
}

// originOf is u's origin as next-auth's new URL(url).origin check reads
// it (weborigin.Origin: Bücher.example is xn--bcher-kva.example, the
// default port left out), "" for no http(s) origin or a host new URL()
// refuses.
func originOf(u *url.URL) string {
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	o, err := weborigin.Origin(u)
	if err != nil {
		return ""
	}
	return o
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
