package csrf_test

import (
	"net/http/httptest"
	"testing"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/csrf"
)

// BenchmarkIssueCookie is what a first visit costs in CSRF: a new token,
// its hash and its cookie line (app's issueCSRF).
func BenchmarkIssueCookie(b *testing.B) {
	s := csrf.NewSigner(secret)
	p := cookies.Writer{}.PrepareHexPair("next-auth.csrf-token", '|')
	rec := httptest.NewRecorder()
	rec.Header()["Set-Cookie"] = make([]string, 0, 1)
	b.ReportAllocs()
	for b.Loop() {
		rec.Header()["Set-Cookie"] = rec.Header()["Set-Cookie"][:0]
		raw, sum := s.Issue()
		p.Set(rec, raw[:], sum[:])
	}
}
