package config

import (
	"strings"
	"time"
)

// The two_factor.mode values.
const (
	TwoFactorOff      = "off"
	TwoFactorOptional = "optional"
	TwoFactorRequired = "required"
)

// TwoFactor is the second sign-in step (authenticator-app codes, recovery
// codes, remembered browsers; docs/two-factor.md). Off by default.
type TwoFactor struct {
	// Mode: off (no second factor), optional (users may turn it on) or
	// required (everyone, or RequiredFor, must before a session starts).
	Mode string `yaml:"mode"`
	// RequiredFor narrows required to these addresses (ada@example.com)
	// and domains (example.com); empty: everyone.
	RequiredFor []string `yaml:"required_for"`
	// RememberDevice is how long "remember this device" skips the code on
	// a browser (default 30 days); 0 does not offer it.
	RememberDevice Duration `yaml:"remember_device"`
	// Issuer names the service in authenticator apps (default: the
	// service URL's host name, without a port); no colon.
	Issuer string `yaml:"issuer"`
}

// On reports whether second factors exist.
func (t TwoFactor) On() bool { return t.Mode == TwoFactorOptional || t.Mode == TwoFactorRequired }

// RequiredList is RequiredFor lower-cased, domains without a leading @.
func (t TwoFactor) RequiredList() []string {
	out := make([]string, 0, len(t.RequiredFor))
	for _, r := range t.RequiredFor {
		out = append(out, strings.TrimPrefix(strings.ToLower(strings.TrimSpace(r)), "@"))
	}
	return out
}

const defaultRememberDevice = Duration(30 * 24 * time.Hour)

// validateTwoFactor reports an unknown mode, a list without required,
// and entries that are neither an address nor a domain.
func (c *Config) validateTwoFactor(add func(string, ...any)) {
	t := c.TwoFactor
	switch t.Mode {
	case TwoFactorOff, TwoFactorOptional, TwoFactorRequired:
	default:
		add("two_factor.mode: %q must be off, optional or required", t.Mode)
	}
	if len(t.RequiredFor) > 0 && t.Mode != TwoFactorRequired {
		add("two_factor.required_for: only means something with mode: required (it narrows who must use two-factor)")
	}
	for _, r := range t.RequiredList() {
		name := r[strings.LastIndexByte(r, '@')+1:]
		if name == "" || strings.Count(r, "@") > 1 || !validMailDomain(name) || (strings.Contains(r, "@") && strings.HasPrefix(r, "@")) {
			add("two_factor.required_for: %q is neither an address (ada@example.com) nor a domain (example.com)", r)
		}
	}
	if strings.Contains(t.Issuer, ":") {
		add("two_factor.issuer: %q must not contain a colon (authenticator apps split the otpauth label issuer:account at the first one)", t.Issuer)
	}
	if t.RememberDevice < 0 {
		add("two_factor.remember_device: must not be negative (0 turns it off)")
	}
	for i, r := range c.Access {
		if r.TwoFactor && !t.On() {
			add("access[%d]: two_factor: true needs two_factor.mode optional or required (with it off, no one could enrol)", i)
		}
	}
	for _, p := range c.Providers {
		if !t.On() || p.ID != TwoFactorProviderID {
			continue
		}
		add("providers: the id %q is two-factor's own (two_factor.mode lists it in /providers); choose another id", TwoFactorProviderID)
	}
}

// TwoFactorProviderID is the provider id the second step answers under:
// GET /providers lists it (type credentials) when two-factor is on, so the
// next-auth client's signIn("two-factor", {code}) posts the code to
// POST /callback/two-factor.
const TwoFactorProviderID = "two-factor"

// TypeTwoFactor is the two-factor provider's own type; /providers reports
// it as credentials (its fields are posted like a password's).
const TypeTwoFactor = "two-factor"
