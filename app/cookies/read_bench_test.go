package cookies_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// BenchmarkValue looks up a signed-in browser's cookies as GET /session
// does: the CSRF token, the callback URL, the session token.
func BenchmarkValue(b *testing.B) {
	r := &http.Request{Header: http.Header{"Cookie": {"next-auth.csrf-token=" + strings.Repeat("ab", 32) + "%7C" + strings.Repeat("cd", 32) +
		"; next-auth.callback-url=http%3A%2F%2Flocalhost%3A3000; next-auth.session-token=" + strings.Repeat("e", 36)}}}
	for b.Loop() {
		for _, name := range []string{"next-auth.csrf-token", "next-auth.callback-url", "next-auth.session-token"} {
			if _, ok := cookies.Value(r, name); !ok {
				b.Fatal(name)
			}
		}
	}
}

// BenchmarkValueJWT is BenchmarkValue with a jwt session's token, a JWE of
// about 480 characters whose every byte is checked.
func BenchmarkValueJWT(b *testing.B) {
	token := "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + strings.Repeat("Ab0_-", 87)
	r := &http.Request{Header: http.Header{"Cookie": {"next-auth.csrf-token=" + strings.Repeat("ab", 32) + "%7C" + strings.Repeat("cd", 32) +
		"; next-auth.callback-url=http%3A%2F%2Flocalhost%3A3000; next-auth.session-token=" + token}}}
	for b.Loop() {
		for _, name := range []string{"next-auth.csrf-token", "next-auth.callback-url", "next-auth.session-token"} {
			if _, ok := cookies.Value(r, name); !ok {
				b.Fatal(name)
			}
		}
	}
}
