package config

import (
	"strings"

	"github.com/latchkey-auth/latchkey/app/config/weborigin"
)

// normalNames writes the configured origins and host names that are
// compared with what browsers send (Origin, Host, a WebAuthn client's
// origin, a relying party's redirect_uri built by new URL()) in the form
// browsers send them (lower-case ASCII, https://x.example for
// https://X.example:443/), and the lists of addresses and domains in
// ASCII too (weborigin.MailName). Values that are not origins or names
// stay as written, for Validate to refuse. (cookies.domain and rp_id are
// read through CookieDomain and PasskeyRPID, which write them so.)
func (c *Config) normalNames() {
	for i, o := range c.AllowedRedirectOrigins {
		if n, ok := weborigin.Normal(o); ok {
			c.AllowedRedirectOrigins[i] = n
		}
	}
	mailLists := [][]string{c.Callbacks.AllowedEmailDomains, c.TwoFactor.RequiredFor}
	for i := range c.Access {
		mailLists = append(mailLists, c.Access[i].Domains, c.Access[i].Emails)
		for j, h := range c.Access[i].Hosts {
			if rest, ok := strings.CutPrefix(h, "*."); ok {
				c.Access[i].Hosts[j] = "*." + weborigin.Host(rest)
			} else if h != "*" {
				c.Access[i].Hosts[j] = weborigin.Host(h)
			}
		}
	}
	for _, r := range c.Groups.Rules {
		mailLists = append(mailLists, r.Domains)
	}
	for _, l := range mailLists {
		for i, e := range l {
			l[i] = weborigin.MailName(e)
		}
	}
	for i := range c.Providers {
		pr := &c.Providers[i]
		for j, o := range pr.Origins {
			if n, ok := weborigin.Normal(o); ok {
				pr.Origins[j] = n
			}
		}
	}
	for i := range c.OpenID.Clients {
		cl := &c.OpenID.Clients[i]
		for j, u := range cl.RedirectURIs {
			cl.RedirectURIs[j] = weborigin.ASCIIHostURL(u)
		}
		for j, u := range cl.PostLogoutRedirectURIs {
			cl.PostLogoutRedirectURIs[j] = weborigin.ASCIIHostURL(u)
		}
	}
}

// validMailDomain: d, a listed domain, is a DNS name once in ASCII (its
// xn-- labels punycode); an entry no address could match is a mistake.
func validMailDomain(d string) bool {
	a, err := weborigin.ASCIIHost(d)
	return err == nil && hostName.MatchString(a)
}
