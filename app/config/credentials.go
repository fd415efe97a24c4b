package config

// TypeCredentials is the e-mail and password provider (next-auth's
// `Credentials`, with latchkey's own user table and hashing).
const TypeCredentials = "credentials"

// SignupEnabled reports whether a credentials provider offers the sign-up
// page: on unless `signup: false` (operators who create users with
// `latchkey users create` or invite them).
func (p Provider) SignupEnabled() bool { return p.Signup == nil || *p.Signup }

// Credentials is the credentials provider, if one is configured.
func (c *Config) Credentials() (Provider, bool) {
	for _, p := range c.Providers {
		if p.Type == TypeCredentials {
			return p, true
		}
	}
	return Provider{}, false
}

func (c *Config) credentialsProviders() int {
	n := 0
	for _, p := range c.Providers {
		if p.Type == TypeCredentials {
			n++
		}
	}
	return n
}

// validateCredentials refuses the settings of other provider types on a
// credentials provider, where they would silently do nothing.
func validateCredentials(pr Provider, where string, add func(string, ...any)) {
	for _, f := range []struct {
		key string
		set bool
	}{
		{"client_id", pr.ClientID != ""}, {"client_secret", pr.ClientSecret != ""}, {"issuer", pr.Issuer != ""},
		{"scopes", len(pr.Scopes) > 0}, {"trust_email", pr.TrustEmail},
		{"allow_dangerous_email_account_linking", pr.AllowDangerousEmailAccountLinking},
	} {
		if f.set {
			add("%s: %s is not a setting of a credentials provider", where, f.key)
		}
	}
}
