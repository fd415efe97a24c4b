package config_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/config/weborigin"
)

// idnOrigins are new URL(in).origin as node writes it ("" for a TypeError):
// browsers send these in Origin, Host and a WebAuthn client's origin.
var idnOrigins = []struct{ in, origin string }{
	{"https://Bücher.example", "https://xn--bcher-kva.example"},
	{"https://BÜCHER.example:443/", "https://xn--bcher-kva.example"},
	{"https://ｅｘａｍｐｌｅ.com", "https://example.com"},
	{"https://faß.de", "https://xn--fa-hia.de"}, // not transitional: not fass.de
	{"https://b%C3%BCcher.example", "https://xn--bcher-kva.example"},
	{"https://xn--Bcher-KVA.example", "https://xn--bcher-kva.example"},
	{"https://例え.テスト:8443/", "https://xn--r8jz45g.xn--zckzah:8443"},
	{"https://münchen.de/", "https://xn--mnchen-3ya.de"},
	{"https://Ⅻ.example", "https://xii.example"},
	{"https://ab\u00ad.example", "https://ab.example"}, // soft hyphen mapped away
	{"https://Bücher.example.", "https://xn--bcher-kva.example."},
	{"https://-abc-.example", "https://-abc-.example"},
	{"https://a_b.example", "https://a_b.example"},
	{"http://[::1]:3000", "http://[::1]:3000"},
	{"https://a\u200db.example", ""}, // a joiner out of context
	{"https://xn--a.example", ""},    // not punycode
	{"https://xn--.example", ""},
	{"https://a.xn--", ""},
	{"https://a.example..", "https://a.example.."},
	{"https://a%2Fb.example", ""},
	// A host that ends in a number is an IPv4 address, in any of the
	// forms inet_aton reads, or no host at all.
	{"https://127.1", "https://127.0.0.1"},
	{"https://0x7f.1:8443/", "https://127.0.0.1:8443"},
	{"https://2130706433", "https://127.0.0.1"},
	{"https://0177.0.0.1", "https://127.0.0.1"},
	{"https://1.0xffffff", "https://1.255.255.255"},
	{"https://0x", "https://0.0.0.0"},
	{"https://４.１", "https://4.0.0.1"},
	{"https://1.2.3.4.", "https://1.2.3.4"},
	{"https://1.2.3.4..", "https://1.2.3.4.."},
	{"https://1.2.3.256", ""},
	{"https://1.2.3.4.5", ""},
	{"https://09.1", ""},
	{"https://a.1", ""},
	{"https://example.0x1g", "https://example.0x1g"},
	{"https://0x100000000", ""},
	{"https://999999999999999999999", ""},
}

func TestOriginsWrittenAsNewURL(t *testing.T) {
	for _, tc := range idnOrigins {
		b, err := config.ParseBase(tc.in)
		o, ok := weborigin.Normal(tc.in)
		if tc.origin == "" {
			require.Error(t, err, tc.in)
			require.False(t, ok, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.origin, b.Origin, tc.in)
		require.True(t, ok, tc.in)
		require.Equal(t, tc.origin, o, tc.in)
	}
}

// TestIDNOriginsAreNodes holds the table above to node's new URL(), where
// node is installed (test/compat needs it).
func TestIDNOriginsAreNodes(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	var in []string
	for _, tc := range idnOrigins {
		in = append(in, tc.in)
	}
	arg, err := json.Marshal(in)
	require.NoError(t, err)
	out, err := exec.Command("node", "-e", `for (const s of JSON.parse(process.argv[1])) {
		let o = ""; try { o = new URL(s).origin } catch {}; console.log(o) }`, string(arg)).Output()
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, got, len(idnOrigins))
	for i, tc := range idnOrigins {
		require.Equal(t, tc.origin, got[i], tc.in)
	}
}

func TestWebOriginRefusesNonOrigins(t *testing.T) {
	for _, bad := range []string{"", "app.example.com", "ftp://x.example", "https://x.example/app", "https://x.example?a",
		"https://x.example#f", "https://u@x.example", "https://x.example:99999", "https://"} {
		_, ok := weborigin.Normal(bad)
		require.False(t, ok, bad)
	}
}

func TestASCIIHostURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://Bücher.example/cb?x=Ü":     "https://xn--bcher-kva.example/cb?x=Ü",
		"https://bücher.example:8443#x":     "https://xn--bcher-kva.example:8443#x",
		"https://App.Example.com/cb":        "https://App.Example.com/cb", // ASCII: exactly as written
		"com.example.app:/cb":               "com.example.app:/cb",
		"http://127.0.0.1:3000/Ü":           "http://127.0.0.1:3000/Ü",
		"http://127.1:3000/cb?x=1.2":        "http://127.0.0.1:3000/cb?x=1.2", // new URL()'s IPv4 forms
		"https://0x7F.1/cb":                 "https://127.0.0.1/cb",
		"https://1.2.3.256/cb":              "https://1.2.3.256/cb",        // no address: left to validation
		"https://a\u200db.example/cb":       "https://a\u200db.example/cb", // not a host: left to validation
		"https://user@bücher.example/cb":    "https://user@bücher.example/cb",
		"HTTPS://Bücher.example/callback/x": "HTTPS://xn--bcher-kva.example/callback/x",
	} {
		require.Equal(t, want, weborigin.ASCIIHostURL(in), in)
	}
}

// Normalize writes the names compared with browsers' in ASCII, and the
// origins as a browser's Origin header (no trailing /); what is not a
// name or an origin is left for Validate to refuse.
func TestNormalizeWritesNamesAsBrowsersSendThem(t *testing.T) {
	c := config.Defaults()
	c.ServiceURL = "https://auth.Bücher.example/api/auth"
	c.Secret = strings.Repeat("s", 32)
	c.AllowedRedirectOrigins = []string{"https://App.Bücher.example/", "https://x.example/path"}
	c.Cookies.Domain = ".Bücher.example"
	c.Access = []config.AccessRule{{Hosts: []string{"*.Bücher.example", "Wiki.Bücher.example", "*"}, Anyone: true}}
	c.Providers = []config.Provider{{ID: "passkey", Type: config.TypeWebAuthn, Passkey: config.Passkey{RPID: "Bücher.example",
		Origins: []string{"https://App.Bücher.example:443/"}}}}
	c.OpenID.Clients = []config.OpenIDClient{{ID: "c", RedirectURIs: []string{"https://Bücher.example/cb", "https://App.Example.com/cb"}}}
	c.Normalize()
	require.Equal(t, []string{"https://app.xn--bcher-kva.example", "https://x.example/path"}, c.AllowedRedirectOrigins)
	require.Equal(t, "xn--bcher-kva.example", c.Cookies.CookieDomain())
	require.Equal(t, []string{"*.xn--bcher-kva.example", "wiki.xn--bcher-kva.example", "*"}, c.Access[0].Hosts)
	require.Equal(t, "xn--bcher-kva.example", c.PasskeyRPID(c.Providers[0]))
	require.Equal(t, []string{"https://app.xn--bcher-kva.example"}, c.Providers[0].Origins)
	require.Equal(t, []string{"https://xn--bcher-kva.example/cb", "https://App.Example.com/cb"}, c.OpenID.Clients[0].RedirectURIs)

	_, err := c.Validate(func(string) ([]string, bool) { return nil, false })
	require.ErrorContains(t, err, `allowed_redirect_origins: "https://x.example/path" is not an origin`)
	require.NotContains(t, err.Error(), "cookies.domain")
	require.NotContains(t, err.Error(), "access[0]")
	require.NotContains(t, err.Error(), "passkey")
}

// The lists of addresses and domains (access rules, allowed_email_domains,
// group rules, two_factor.required_for) are written in ASCII, the form
// email.Comparable writes an address in; a name that is no valid IDN is
// refused rather than left to match nothing.
func TestNormalizeWritesMailDomainsInASCII(t *testing.T) {
	c := config.Defaults()
	c.ServiceURL = "https://auth.example.com/api/auth"
	c.Secret = strings.Repeat("s", 32)
	c.Access = []config.AccessRule{{Hosts: []string{"*"}, Domains: []string{"Bücher.example", "@München.de"}, Emails: []string{"Ada@Bücher.example"}}}
	c.Callbacks.AllowedEmailDomains = []string{"bücher.example", "@xn--mnchen-3ya.de"}
	c.Groups.Rules = []config.GroupRule{{Domains: []string{"BÜCHER.example"}, Groups: []string{"readers"}}}
	c.TwoFactor.Mode = config.TwoFactorRequired
	c.TwoFactor.RequiredFor = []string{"bücher.example", " ada@München.de"}
	c.Normalize()
	require.Equal(t, []string{"xn--bcher-kva.example", "@xn--mnchen-3ya.de"}, c.Access[0].Domains)
	require.Equal(t, []string{"Ada@xn--bcher-kva.example"}, c.Access[0].Emails)
	require.Equal(t, []string{"xn--bcher-kva.example", "@xn--mnchen-3ya.de"}, c.Callbacks.AllowedEmailDomains)
	require.Equal(t, []string{"xn--bcher-kva.example"}, c.Groups.Rules[0].Domains)
	require.Equal(t, []string{"xn--bcher-kva.example", "ada@xn--mnchen-3ya.de"}, c.TwoFactor.RequiredList())
	_, err := c.Validate(func(string) ([]string, bool) { return nil, false })
	require.NoError(t, err)

	c.Access[0].Domains = []string{"xn--zz.example", "a\u200db.example"}
	c.Access[0].Emails = []string{"ada@xn--zz.example"}
	c.Callbacks.AllowedEmailDomains = []string{"xn--zz.example", "*.example.com"}
	c.Groups.Rules[0].Domains = []string{"xn--zz.example"}
	c.TwoFactor.RequiredFor = []string{"xn--zz.example"}
	c.Normalize()
	_, err = c.Validate(func(string) ([]string, bool) { return nil, false })
	for _, want := range []string{
		`access[0]: domain "xn--zz.example" must be a domain`,
		`access[0]: domain "a\u200db.example" must be a domain`,
		`access[0]: "ada@xn--zz.example" is not an e-mail address`,
		`callbacks.allowed_email_domains: "xn--zz.example" must be a domain`,
		`callbacks.allowed_email_domains: "*.example.com" must be a domain`,
		`groups.rules[0]: domain "xn--zz.example" must be a domain`,
		`two_factor.required_for: "xn--zz.example" is neither`,
	} {
		require.ErrorContains(t, err, want)
	}
}
