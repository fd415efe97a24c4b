package cookies_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// TestPairMatchesSet: a Pair's line is Writer.Set's line for the joined
// value, byte for byte, with every kind of Writer and part (parts that
// need escaping take Set's own path), and it replaces a line of the same
// name already on the response.
func TestPairMatchesSet(t *testing.T) {
	hex := strings.Repeat("0a9f", 16)
	writers := map[string]cookies.Writer{
		"default": {}, "secure": {Secure: true}, "path": {Path: "/api/auth"},
		"domain": {Domain: "example.com", Secure: true}, "bad path": {Path: "/a;b\x01"},
	}
	parts := [][2]string{{hex, hex}, {"", ""}, {hex, ""}, {"a b", hex}, {hex, "é|%"}, {"AZaz09-_.!~*'()", "x"}}
	for wname, w := range writers {
		for _, name := range []string{"next-auth.csrf-token", "__Host-next-auth.csrf-token", "bad name"} {
			p := w.PreparePair(name, '|')
			for _, ab := range parts {
				want := httptest.NewRecorder()
				w.Set(want, name, ab[0]+"|"+ab[1], time.Time{}, 0)
				got := httptest.NewRecorder()
				w.Set(got, name, "an earlier value", time.Time{}, 0)
				w.Set(got, "other", "x", time.Time{}, 0)
				a := p.Set(got, []byte(ab[0]), []byte(ab[1]))
				require.Equal(t, ab[0], a, "%s %s %q", wname, name, ab)
				require.Equal(t, want.Header()["Set-Cookie"], deleteLine(got.Header()["Set-Cookie"], "other="), "%s %s %q", wname, name, ab)
			}
		}
	}
}

func deleteLine(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// TestPairOneAllocation: hex parts, as a CSRF cookie's, cost one
// allocation (the line, of which the returned part is a piece), beside
// the response's own Set-Cookie slice.
func TestPairOneAllocation(t *testing.T) {
	p := cookies.Writer{Secure: true}.PreparePair("__Host-next-auth.csrf-token", '|')
	a, b := []byte(strings.Repeat("ab", 32)), []byte(strings.Repeat("cd", 32))
	rec := httptest.NewRecorder()
	rec.Header()["Set-Cookie"] = make([]string, 0, 1)
	allocs := testing.AllocsPerRun(100, func() {
		rec.Header()["Set-Cookie"] = rec.Header()["Set-Cookie"][:0]
		if p.Set(rec, a, b) != string(a) {
			t.Fatal("wrong part")
		}
	})
	require.Equal(t, 1.0, allocs)
}
