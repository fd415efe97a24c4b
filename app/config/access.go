package config

import (
	"net"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/latchkey-auth/latchkey/app/config/weborigin"
)

// AccessRule says who passes forward-auth for some protected hosts: a
// signed-in user whose verified e-mail is one of Emails or ends in @ one of
// Domains, or who is in one of Groups (app/groups: added by an admin, or
// given by a groups rule), or, with Anyone, every signed-in user. Hosts are names as the
// proxy forwards them (the port is ignored): app.example.com, *.example.com
// (any name below it, not itself) or * (every host no earlier rule names).
// The first rule naming a host decides; once there are rules, a host no
// rule names is refused (a client may make the proxy forward a name no one
// thought of), so a host open to all is one named with Anyone.
type AccessRule struct {
	Hosts   []string `yaml:"hosts"`
	Emails  []string `yaml:"emails"`
	Domains []string `yaml:"domains"`
	// Groups admits the members of any of these groups (case-sensitive
	// names).
	Groups []string `yaml:"groups"`
	// Anyone admits every signed-in user, verified address or not; a rule
	// has either it or Emails/Domains/Groups, never both.
	Anyone bool `yaml:"anyone"`
	// TwoFactor admits only sessions that signed in with two factors; a
	// session with one is sent to the second step (a step-up) first.
	TwoFactor bool `yaml:"two_factor"`
}

// hostName is a DNS name: letters, digits and dashes in dot-separated
// labels, any case.
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// CookieDomain is cookies.domain as the Domain attribute carries it:
// lower-case ASCII (xn--bcher-kva.example for Bücher.example, the name
// browsers match it with), without the leading dot browsers ignore; ""
// for host-only.
func (c Cookies) CookieDomain() string {
	d := strings.TrimPrefix(strings.TrimSpace(c.Domain), ".")
	if d == "" {
		return ""
	}
	return strings.ToLower(weborigin.Host(d))
}

// validateCookieDomain: a registrable name (never a public suffix such as
// com or co.uk, which browsers refuse) that the service URL's host is in,
// or the browser would reject the session cookie latchkey sets.
func (c *Config) validateCookieDomain(add func(string, ...any)) {
	d := c.Cookies.CookieDomain()
	if d == "" {
		return
	}
	if !hostName.MatchString(d) || net.ParseIP(d) != nil {
		add("cookies.domain: %q is not a host name like example.com", c.Cookies.Domain)
		return
	}
	if suffix, _ := publicsuffix.PublicSuffix(d); suffix == d {
		add("cookies.domain: %q is a public suffix; browsers refuse cookies for it (use your own domain, e.g. example.com)", c.Cookies.Domain)
		return
	}
	base, err := ParseBase(c.ServiceURL)
	if err != nil {
		return // reported as service_url
	}
	u, _ := url.Parse(base.Origin)
	host := strings.ToLower(u.Hostname())
	if host != d && !strings.HasSuffix(host, "."+d) {
		add("cookies.domain: the service URL's host %q is not %q or below it, so browsers would refuse the session cookie", host, d)
	}
}

// validateAccess checks every access rule: hosts, and either anyone or at
// least one e-mail, domain or group (a rule admitting nobody is more likely a
// typo than a wish; one with both would leave a reader unsure which wins).
func (c *Config) validateAccess(add func(string, ...any)) {
	for i, r := range c.Access {
		if len(r.Hosts) == 0 {
			add("access[%d]: hosts is empty (list host names, *.example.com or *)", i)
		}
		for _, h := range r.Hosts {
			if h != "*" && !hostName.MatchString(weborigin.Host(strings.TrimPrefix(h, "*."))) {
				add("access[%d]: host %q must be a host name (no scheme or port), *.example.com or *", i, h)
			}
		}
		switch listed := len(r.Emails) > 0 || len(r.Domains) > 0 || len(r.Groups) > 0; {
		case r.Anyone && listed:
			add("access[%d]: give either anyone: true or emails/domains/groups, not both", i)
		case !r.Anyone && !listed:
			add("access[%d]: give emails, domains or groups, or anyone: true; a rule without any would admit nobody", i)
		}
		for _, g := range r.Groups {
			if !ValidGroupName(g) {
				add("access[%d]: group %q must be %s", i, g, GroupNameRule)
			}
		}
		for _, e := range r.Emails {
			local, domain, ok := strings.Cut(e, "@")
			if !ok || local == "" || !validMailDomain(domain) || strings.ContainsAny(e, " \t\r\n") {
				add("access[%d]: %q is not an e-mail address", i, e)
			}
		}
		for _, d := range r.Domains {
			if !validMailDomain(strings.TrimPrefix(d, "@")) {
				add("access[%d]: domain %q must be a domain like example.com", i, d)
			}
		}
	}
}
