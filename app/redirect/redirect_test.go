package redirect_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/redirect"
)

func TestResolve(t *testing.T) {
	p := redirect.NewPolicy("http://localhost:3000", []string{"https://app.example.com", "HTTPS://Upper.Example.com/", "https://web.example.com:443",
		"https://xn--bcher-kva.example", "http://10.0.0.1:8080"})
	const origin = "http://localhost:3000"
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		// Accepted.
		{"/", origin + "/", true},
		{"/dashboard", origin + "/dashboard", true},
		{"/a/b?c=d#e", origin + "/a/b?c=d#e", true},
		{"/@evil.test", origin + "/@evil.test", true},           // a path, not userinfo
		{"/%2F%2Fevil.test", origin + "/%2F%2Fevil.test", true}, // encoded slashes stay a path
		{"http://localhost:3000", "http://localhost:3000", true},
		{"http://localhost:3000/x", "http://localhost:3000/x", true},
		{"HTTP://LOCALHOST:3000/x", "HTTP://LOCALHOST:3000/x", true}, // uppercase host and scheme
		{"http://LocalHost:3000/x", "http://LocalHost:3000/x", true},
		{"https://app.example.com/home", "https://app.example.com/home", true}, // allowed extra origin
		{"https://upper.example.com/", "https://upper.example.com/", true},     // allow-list is case-insensitive
		{"https://APP.example.com/home", "https://APP.example.com/home", true}, // uppercase host
		{"http://localhost:3000#@evil.test", "http://localhost:3000#@evil.test", true},
		{"http://localhost:3000?u=https://evil.test", "http://localhost:3000?u=https://evil.test", true},
		{"https://app.example.com:443/home", "https://app.example.com:443/home", true},   // the default port
		{"https://web.example.com/", "https://web.example.com/", true},                   // allowed as https://web.example.com:443
		{"https://app.example.com:0443/home", "https://app.example.com:0443/home", true}, // port 443, as new URL() reads it
		// A Unicode host is the xn-- one, as new URL() reads it, and the
		// browser is sent to the xn-- form.
		{"https://bücher.example/x?y=ü#z", "https://xn--bcher-kva.example/x?y=ü#z", true},
		{"HTTPS://BÜCHER.Example:443/x", "HTTPS://xn--bcher-kva.example:443/x", true},
		{"https://bücher．example/", "https://xn--bcher-kva.example/", true}, // a full-width dot
		{"https://xn--bcher-kva.example/x", "https://xn--bcher-kva.example/x", true},
		// An IPv4 address in a form new URL() reads (10.1 is 10.0.0.1).
		{"http://10.1:8080/x", "http://10.0.0.1:8080/x", true},
		{"http://0xa.0.0.1:8080/x", "http://10.0.0.1:8080/x", true},
		{"http://167772161:8080/x", "http://10.0.0.1:8080/x", true},

		// Rejected: fall back to the origin.
		{"", origin, false},
		{"//evil.test", origin, false},
		{"//evil.test/x", origin, false},
		{"///evil.test", origin, false},
		{`/\evil.test`, origin, false},
		{`\\evil.test`, origin, false},
		{`/\/evil.test`, origin, false},
		{"https://evil.test", origin, false},
		{"http://evil.test/", origin, false},
		{"HTTPS://EVIL.TEST", origin, false},
		{"javascript:alert(1)", origin, false},
		{"JavaScript:alert(1)", origin, false},
		{"javascript://localhost:3000/%0aalert(1)", origin, false},
		{"data:text/html,hi", origin, false},
		{"mailto:a@localhost", origin, false},
		{"evil", origin, false}, // a bare word
		{"evil.test", origin, false},
		{"dashboard", origin, false},
		{"./dashboard", origin, false},
		{"../dashboard", origin, false},
		{"?x=1", origin, false},
		{"#frag", origin, false},
		{"/\tevil", origin, false}, // control characters
		{"/\nevil", origin, false},
		{"/\r\nSet-Cookie: a=b", origin, false},
		{"/\x00", origin, false},
		{"/\x7f", origin, false},
		{"\x01http://localhost:3000", origin, false},
		{" http://localhost:3000", origin, false}, // leading space: not a URL, not a path
		{"http://localhost:3000.evil.test", origin, false},
		{"http://localhost:3000.evil.test/x", origin, false},
		{"http://localhost:3000@evil.test", origin, false}, // userinfo tricks
		{"http://localhost:3000:@evil.test", origin, false},
		{"http://user:pass@localhost:3000/", origin, false},
		{"http://localhost:3000%40evil.test", origin, false},
		{`http://localhost:3000\@evil.test`, origin, false},
		{"https://evil.test%2F@localhost:3000", origin, false},
		{"https://localhost:3000/", origin, false}, // other scheme is another origin
		{"http://localhost:3001/", origin, false},  // other port
		{"http://localhost/", origin, false},
		{"http:/evil.test", origin, false},
		{"http:evil.test", origin, false},
		{"http:///evil.test", origin, false},
		{"ftp://localhost:3000/", origin, false},
		{"http://app.example.com/home", origin, false}, // allow-listed host, wrong scheme
		{"http://app.example.com:443/home", origin, false},
		{"https://app.example.com:80/home", origin, false},
		{"https://app.example.com:8443/home", origin, false},
		{"https://app.example.com.evil.test/", origin, false},
		{"http://еvil.test", origin, false}, // Cyrillic е
		{"https://bücher.example.evil.test/", origin, false},
		{"https://bucher.example/", origin, false},
		{"https://xn--bcher-kva.example@evil.test/", origin, false},
		{"https://bücher.example\u00ad.evil.test/", origin, false},
		{"https://xn--/", origin, false}, // not a name new URL() reads
		{"http://10.0.0.257:8080/", origin, false},
		{"http://10.1.0:8080/", origin, false}, // 10.1.0.0
		{"http://0x10.0.0.1:8080/", origin, false},
		{"/" + strings.Repeat("a", 4096), origin, false},
	}
	for _, tc := range cases {
		got, ok := p.Resolve(tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
		require.Equal(t, tc.ok, ok, "%q", tc.in)
	}
}

func TestPolicyOrigin(t *testing.T) {
	require.Equal(t, "https://ex.com", redirect.NewPolicy("https://EX.com/", nil).Origin())
	p := redirect.NewPolicy("https://ex.com", nil)
	got, ok := p.Resolve("https://ex.com/x")
	require.True(t, ok)
	require.Equal(t, "https://ex.com/x", got)
	got, ok = p.Resolve("http://ex.com/x")
	require.False(t, ok, "http is another origin than https")
	require.Equal(t, "https://ex.com", got)

	p = redirect.NewPolicy("https://ex.com:443", nil)
	for _, in := range []string{"/x", "https://ex.com/x", "https://ex.com:443/x"} {
		_, ok = p.Resolve(in)
		require.True(t, ok, "%q: the default port is the origin's", in)
	}
}

// FuzzResolve: whatever comes in, what comes out is on an allowed origin.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/", "//evil.test", `/\evil`, "http://localhost:3000@evil.test", "javascript:x", "https://app.example.com/x"} {
		f.Add(s)
	}
	p := redirect.NewPolicy("http://localhost:3000", []string{"https://app.example.com"})
	// https://app.example.com:0443 is port 443 too, as new URL() reads it.
	defaultPort := regexp.MustCompile(`^https://app\.example\.com:0*443\b`)
	f.Fuzz(func(t *testing.T, in string) {
		got, _ := p.Resolve(in)
		lower := defaultPort.ReplaceAllString(strings.ToLower(got), "https://app.example.com")
		if !(strings.HasPrefix(lower, "http://localhost:3000/") || lower == "http://localhost:3000" ||
			strings.HasPrefix(lower, "http://localhost:3000?") || strings.HasPrefix(lower, "http://localhost:3000#") ||
			strings.HasPrefix(lower, "https://app.example.com/") || lower == "https://app.example.com" ||
			strings.HasPrefix(lower, "https://app.example.com?") || strings.HasPrefix(lower, "https://app.example.com#")) {
			t.Fatalf("Resolve(%q) = %q leaves the allowed origins", in, got)
		}
	})
}
