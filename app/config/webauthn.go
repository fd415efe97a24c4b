package config

import (
	"net"
	"net/url"
	"strings"

	"github.com/latchkey-auth/latchkey/app/config/weborigin"
)

// Passkey is the settings of a type: webauthn provider. Every field is
// optional: the relying party is SERVICE_URL's host and origin.
type Passkey struct {
	// RPID is the relying-party id passkeys are bound to: SERVICE_URL's
	// host, or a parent domain of it (example.com for auth.example.com) so
	// that sibling hosts can use the same passkeys.
	RPID string `yaml:"rp_id"`
	// Origins are further origins (https://app.example.com) whose pages may
	// run the ceremonies, besides SERVICE_URL's own; each host must be RPID
	// or below it.
	Origins []string `yaml:"origins"`
	// UserVerification is what registration asks of the authenticator:
	// preferred (default), required or discouraged.
	UserVerification string `yaml:"user_verification"`
	// SignInUserVerification is what a sign-in asks: required (default)
	// refuses an answer without the UV flag, so a found security key is
	// not the account without its PIN or biometric; preferred or
	// discouraged also take an answer that only proves presence.
	SignInUserVerification string `yaml:"sign_in_user_verification"`
	// Attestation is none (default), indirect, direct or enterprise.
	Attestation string `yaml:"attestation"`
	// CounterRegression is what a signature counter that did not move
	// forward (a possibly cloned authenticator) does: refuse (default) the
	// sign-in, or warn in the log and sign in.
	CounterRegression string `yaml:"counter_regression"`
}

// Passkey option values.
const (
	CounterRefuse = "refuse"
	CounterWarn   = "warn"
)

// PasskeyRPID is the relying-party id in effect for a provider.
func (c *Config) PasskeyRPID(p Provider) string {
	if p.RPID != "" {
		return strings.ToLower(weborigin.Host(p.RPID))
	}
	base, err := ParseBase(c.ServiceURL)
	if err != nil {
		return ""
	}
	u, _ := url.Parse(base.Origin)
	return strings.ToLower(u.Hostname())
}

// validatePasskey checks a webauthn provider's settings.
func (c *Config) validatePasskey(pr Provider, where string, add func(string, ...any)) {
	rpID := c.PasskeyRPID(pr)
	if net.ParseIP(strings.Trim(rpID, "[]")) != nil {
		add("%s: passkeys need a domain name, not the IP address %s: use http://localhost for local development, or set rp_id", where, rpID)
		return
	}
	base, err := ParseBase(c.ServiceURL)
	if err == nil {
		u, _ := url.Parse(base.Origin)
		if !domainWithin(u.Hostname(), rpID) {
			add("%s: rp_id %q must be the service URL's host %q or a parent domain of it", where, rpID, u.Hostname())
		}
	}
	for _, o := range pr.Origins {
		n, ok := weborigin.Normal(o)
		if !ok {
			add("%s: origin %q must be scheme://host[:port]", where, o)
			continue
		}
		if u, _ := url.Parse(n); !domainWithin(u.Hostname(), rpID) {
			add("%s: origin %q is not on rp_id %q or below it", where, o, rpID)
		}
	}
	switch pr.UserVerification {
	case "", "preferred", "required", "discouraged":
	default:
		add("%s: user_verification %q must be preferred, required or discouraged", where, pr.UserVerification)
	}
	switch pr.SignInUserVerification {
	case "", "preferred", "required", "discouraged":
	default:
		add("%s: sign_in_user_verification %q must be required, preferred or discouraged", where, pr.SignInUserVerification)
	}
	switch pr.Attestation {
	case "", "none", "indirect", "direct", "enterprise":
	default:
		add("%s: attestation %q must be none, indirect, direct or enterprise", where, pr.Attestation)
	}
	switch pr.CounterRegression {
	case "", CounterRefuse, CounterWarn:
	default:
		add("%s: counter_regression %q must be refuse or warn", where, pr.CounterRegression)
	}
}

// domainWithin reports whether host is domain or a subdomain of it.
func domainWithin(host, domain string) bool {
	host, domain = strings.ToLower(host), strings.ToLower(domain)
	return domain != "" && (host == domain || strings.HasSuffix(host, "."+domain))
}
