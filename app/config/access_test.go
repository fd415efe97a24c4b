package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// cookies.domain must be a registrable name that holds the service URL's
// host, or browsers would refuse (or over-share) the session cookie.
func TestCookieDomain(t *testing.T) {
	for _, tc := range []struct{ service, domain, problem string }{
		{"https://auth.example.com/api/auth", "example.com", ""},
		{"https://auth.example.com/api/auth", ".Example.COM", ""},
		{"https://example.com/api/auth", "example.com", ""},
		{"https://auth.example.co.uk/api/auth", "example.co.uk", ""},
		{"https://auth.example.com/api/auth", "other.com", "is not \"other.com\" or below it"},
		{"https://auth.example.com/api/auth", "ample.com", "is not \"ample.com\" or below it"},
		{"https://auth.example.com/api/auth", "com", "public suffix"},
		{"https://auth.example.co.uk/api/auth", "co.uk", "public suffix"},
		{"https://auth.example.com/api/auth", "https://example.com", "not a host name"},
		{"https://auth.example.com/api/auth", "example.com:443", "not a host name"},
		{"http://127.0.0.1:3000/api/auth", "127.0.0.1", "not a host name"},
	} {
		cfg := config.Defaults()
		cfg.ServiceURL, cfg.Secret = tc.service, "0123456789abcdef0123456789abcdef"
		cfg.Cookies.Domain = tc.domain
		_, err := cfg.Validate(catalogue)
		if tc.problem == "" {
			require.NoError(t, err, "%+v", tc)
			continue
		}
		requireProblem(t, problems(t, err), "cookies.domain", tc.problem)
	}
	require.Equal(t, "example.com", config.Cookies{Domain: " .Example.com"}.CookieDomain())
}

// Access rules are checked at start-up: a host that is a URL, an address
// that is not one, or a rule admitting nobody are all refused, together.
func TestAccessRules(t *testing.T) {
	cfg := config.Defaults()
	cfg.Access = []config.AccessRule{
		{Hosts: []string{"app.example.com", "*.corp.example.com", "*"}, Emails: []string{"Alice@Example.com"}, Domains: []string{"example.org", "@example.net"}},
	}
	_, err := cfg.Validate(catalogue)
	require.NoError(t, err)

	cfg.Access = []config.AccessRule{
		{Hosts: []string{"https://app.example.com"}, Emails: []string{"a@example.com"}},
		{Hosts: []string{"app.example.com:8443"}, Domains: []string{"example.com"}},
		{Emails: []string{"a@example.com"}},
		{Hosts: []string{"app.example.com"}},
		{Hosts: []string{"app.example.com"}, Emails: []string{"nobody", "a b@example.com"}, Domains: []string{"*.example.com"}},
		{Hosts: []string{"open.example.com"}, Anyone: true, Domains: []string{"example.com"}},
		{Hosts: []string{"staff.example.com"}, Groups: []string{"staff", "no spaces", ""}},
		{Hosts: []string{"open.example.com"}, Anyone: true, Groups: []string{"staff"}},
	}
	_, err = cfg.Validate(catalogue)
	p := problems(t, err)
	requireProblem(t, p, "access[0]: host \"https://app.example.com\"")
	requireProblem(t, p, "access[1]: host \"app.example.com:8443\"")
	requireProblem(t, p, "access[2]: hosts is empty")
	requireProblem(t, p, "access[3]: give emails, domains or groups")
	requireProblem(t, p, "access[4]: \"nobody\" is not an e-mail address")
	requireProblem(t, p, "access[4]: \"a b@example.com\" is not an e-mail address")
	requireProblem(t, p, "access[4]: domain \"*.example.com\"")
	requireProblem(t, p, "access[5]: give either anyone: true or emails/domains/groups, not both")
	requireProblem(t, p, "access[6]: group \"no spaces\" must be 1 to 64 letters")
	requireProblem(t, p, "access[6]: group \"\" must be")
	require.NotContains(t, strings.Join(p, "\n"), `access[6]: group "staff"`)
	requireProblem(t, p, "access[7]: give either anyone: true or emails/domains/groups, not both")

	cfg.Access = []config.AccessRule{{Hosts: []string{"open.example.com"}, Anyone: true}}
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err, "anyone: true alone is a rule")
	cfg.Access = []config.AccessRule{{Hosts: []string{"staff.example.com"}, Groups: []string{"staff", "ops:on-call_2.x"}}}
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err, "groups alone are a rule")
}

// The file's keys: cookies.domain and access load from YAML.
func TestAccessRulesLoad(t *testing.T) {
	cfg, err := config.Load([]byte(`
service_url: http://auth.example.com/api/auth
cookies:
  domain: example.com
access:
  - hosts: [app.example.com]
    emails: [alice@example.com]
    domains: [example.org]
  - hosts: [wiki.example.com]
    anyone: true
  - hosts: [ops.example.com]
    groups: [ops]
groups:
  rules:
    - domains: [example.com, "@example.org"]
      groups: [staff, everyone]
`), env())
	require.NoError(t, err)
	require.Equal(t, "example.com", cfg.Cookies.Domain)
	require.Equal(t, []config.AccessRule{
		{Hosts: []string{"app.example.com"}, Emails: []string{"alice@example.com"}, Domains: []string{"example.org"}},
		{Hosts: []string{"wiki.example.com"}, Anyone: true},
		{Hosts: []string{"ops.example.com"}, Groups: []string{"ops"}},
	}, cfg.Access)
	require.Equal(t, []config.GroupRule{{Domains: []string{"example.com", "@example.org"}, Groups: []string{"staff", "everyone"}}}, cfg.Groups.Rules)
}
