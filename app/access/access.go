// Package access decides whether a signed-in user may reach a host that
// latchkey protects through forward-auth (the access rules of the config).
package access

import (
	"strings"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
)

// Policy is the compiled list of rules, in order. The zero Policy has no
// rules and lets every signed-in user through; a Policy with rules lets
// through only whom the first rule naming the host admits.
type Policy struct {
	rules []rule
}

type rule struct {
	exact    map[string]bool // host names
	suffixes []string        // ".example.com" for *.example.com
	any      bool            // *
	anyone   bool            // every signed-in user
	mfa      bool            // two factors only
	emails   map[string]bool
	domains  map[string]bool
	groups   map[string]bool // case-sensitive names
}

// New compiles validated rules: host names, addresses and domains compare
// case-insensitively, group names exactly.
func New(rules []config.AccessRule) Policy {
	var p Policy
	for _, r := range rules {
		c := rule{exact: map[string]bool{}, anyone: r.Anyone, mfa: r.TwoFactor, emails: map[string]bool{}, domains: map[string]bool{}, groups: map[string]bool{}}
		for _, h := range r.Hosts {
			h = strings.ToLower(h)
			switch {
			case h == "*":
				c.any = true
			case strings.HasPrefix(h, "*."):
				c.suffixes = append(c.suffixes, h[1:])
			default:
				c.exact[h] = true
			}
		}
		for _, e := range r.Emails {
			c.emails[strings.ToLower(e)] = true
		}
		for _, d := range r.Domains {
			c.domains[strings.ToLower(strings.TrimPrefix(d, "@"))] = true
		}
		for _, g := range r.Groups {
			c.groups[g] = true
		}
		p.rules = append(p.rules, c)
	}
	return p
}

// Empty reports whether there are no rules, so callers can skip finding
// the host.
func (p Policy) Empty() bool { return len(p.rules) == 0 }

// RequiresTwoFactor reports whether the rule deciding host admits only
// sessions with two factors.
func (p Policy) RequiresTwoFactor(host string) bool {
	for _, r := range p.rules {
		if r.names(host) {
			return r.mfa
		}
	}
	return false
}

// Allows reports whether a signed-in user whose verified e-mail address is
// email (nil: none, or not verified) and whose groups are groups
// (app/groups: for an unverified address, those an admin added only) may
// reach host, a forwarded host name
// (lower-case, no port); "" means the host could not be told, which only a
// policy without rules allows. The first rule naming host decides; a host
// no rule names is refused: the forwarded name may be one the client chose
// (a Host header a catch-all server block passes on), and an unforeseen
// name must not be the way around the rules.
func (p Policy) Allows(host string, email *string, groups []string) bool {
	if len(p.rules) == 0 {
		return true
	}
	if host == "" {
		return false // the rules cannot be applied: fail closed
	}
	for _, r := range p.rules {
		if !r.names(host) {
			continue
		}
		return r.anyone || (email != nil && r.admits(*email)) || r.hasMember(groups)
	}
	return false
}

func (r rule) names(host string) bool {
	if r.any || r.exact[host] {
		return true
	}
	for _, s := range r.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

func (r rule) hasMember(groups []string) bool {
	for _, g := range groups {
		if r.groups[g] {
			return true
		}
	}
	return false
}

// admits compares the address as email.Comparable writes it (the domain
// in ASCII, as config writes the rules'); one whose domain is no name is
// admitted by no address or domain.
func (r rule) admits(addr string) bool {
	addr, ok := email.Comparable(addr)
	if !ok {
		return false
	}
	return r.emails[addr] || r.domains[addr[strings.LastIndexByte(addr, '@')+1:]]
}
