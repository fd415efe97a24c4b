// Package redirect decides where latchkey may send a browser. Every
// callbackUrl (form, query, cookie) and every redirect target passes Policy.Resolve.
package redirect

import (
	"net/url"
	"strings"
)

// maxLen bounds what we are willing to parse.
const maxLen = 2048

// Policy keeps targets on the service's origin or an allow-listed origin.
type Policy struct {
	origin  string
	allowed map[string]bool
}

// NewPolicy builds a policy for the service origin (scheme://host[:port]) and extra allowed origins.
func NewPolicy(origin string, allowed []string) Policy {
	origin = strings.ToLower(strings.TrimRight(origin, "/"))
	p := Policy{origin: origin, allowed: map[string]bool{origin: true}}
	for _, o := range allowed {
		p.allowed[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	return p
}

// Origin is the fallback target (next-auth's baseUrl).
func (p Policy) Origin() string { return p.origin }

// Resolve returns an absolute URL for target: a relative path with a single
// leading "/" is joined to the origin; an absolute http(s) URL on an allowed
// origin is kept; anything else (//host, /\host, javascript:, bare words,
// control characters, other origins) falls back to the origin. ok says
// whether target was accepted as given.
func (p Policy) Resolve(target string) (resolved string, ok bool) {
	if target == "" || len(target) > maxLen || hasControl(target) || strings.Contains(target, `\`) {
		return p.origin, false
	}
	if target[0] == '/' {
		if len(target) > 1 && target[1] == '/' {
			return p.origin, false
		}
		u, err := url.Parse(p.origin + target)
		if err != nil || p.originOf(u) != p.origin {
			return p.origin, false
		}
		return p.origin + target, true
	}
	u, err := url.Parse(target)
	if err != nil || u.Opaque != "" || u.User != nil {
		return p.origin, false
	}
	if o := p.originOf(u); o != "" && p.allowed[o] {
		return target, true
	}
	return p.origin, false
}

func (p Policy) originOf(u *url.URL) string {
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
