package redirect

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The shortcut never answers differently from the full check: for targets
// built around the origin from the characters that matter to url.Parse,
// whenever sameOrigin takes a target, resolve keeps it as it is.
func TestSameOriginAgreesWithResolve(t *testing.T) {
	origins := []string{"http://localhost:3000", "https://auth.example.com", "http://127.0.0.1:8080", "https://x"}
	pieces := []string{"/", "//", "a", "Z", "0", "?", "#", "%", "%2F", "%zz", "@", ":", ";", "=", "&", "+", " ", "\t",
		"\\", "\x00", "\x7f", "é", "[", "]", "!", "$", "'", "(", ")", "*", ",", "~", "evil.test", ".", "..", "-", "_"}
	r := rand.New(rand.NewPCG(11, 12))
	taken := 0
	for _, origin := range origins {
		p := NewPolicy(origin, []string{"https://app.example.com"})
		if !p.plainOrigin {
			t.Fatalf("%s should take the shortcut", origin)
		}
		for range 20000 {
			var b strings.Builder
			if r.IntN(10) > 0 {
				b.WriteString(origin)
			}
			for range r.IntN(8) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			target := b.String()
			if !p.sameOrigin(target) {
				continue
			}
			taken++
			if got, ok := p.resolve(target); !ok || got != target {
				t.Fatalf("%s: shortcut keeps %q, the full check gives %q, %v", origin, target, got, ok)
			}
		}
	}
	if taken < 1000 {
		t.Fatalf("the shortcut was only taken %d times", taken)
	}
}

// Origins the shortcut cannot reason about always take the full check.
func TestPlainOrigins(t *testing.T) {
	for _, origin := range []string{"http://localhost:3000", "https://xn--e1afmkfd.test", "http://10.0.0.1"} {
		if !plain(origin) {
			t.Errorf("%s is plain", origin)
		}
	}
	for _, origin := range []string{"http://[::1]:3000", "http://localhost:", "ftp://x", "http://", "http://a_b", "http://:80", "http://A.test"} {
		if plain(origin) {
			t.Errorf("%s is not plain", origin)
		}
	}
}
