package cookies_test

import (
	"encoding/hex"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// TestHexPairMatchesSet: a HexPair's line is Writer.Set's line for the
// joined hex value, byte for byte, with every kind of Writer, name and
// length, and it replaces a line of the same name already on the response.
func TestHexPairMatchesSet(t *testing.T) {
	writers := map[string]cookies.Writer{
		"default": {}, "secure": {Secure: true}, "path": {Path: "/api/auth"},
		"domain": {Domain: "example.com", Secure: true}, "bad path": {Path: "/a;b\x01"},
	}
	parts := [][2][]byte{
		{[]byte(strings.Repeat("\x0a\xff", 16)), []byte(strings.Repeat("\x00\x9c", 16))},
		{nil, nil}, {[]byte("x"), nil}, {[]byte(strings.Repeat("long", 100)), []byte("y")},
	}
	for wname, w := range writers {
		for _, name := range []string{"next-auth.csrf-token", "__Host-next-auth.csrf-token", "bad name"} {
			for _, sep := range []byte{'|', '-'} {
				p := w.PrepareHexPair(name, sep)
				for _, ab := range parts {
					ha, hb := hex.EncodeToString(ab[0]), hex.EncodeToString(ab[1])
					want := httptest.NewRecorder()
					w.Set(want, name, ha+string(sep)+hb, time.Time{}, 0)
					got := httptest.NewRecorder()
					w.Set(got, name, "an earlier value", time.Time{}, 0)
					w.Set(got, "other", "x", time.Time{}, 0)
					require.Equal(t, ha, p.Set(got, ab[0], ab[1]), "%s %s %q", wname, name, ab)
					require.Equal(t, want.Header()["Set-Cookie"], withoutLine(got.Header()["Set-Cookie"], "other="), "%s %s %q", wname, name, ab)
				}
			}
		}
	}
}

func withoutLine(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// TestHexPairOneAllocation: a CSRF cookie's line is one allocation, of
// which the hex string returned is a piece (beside the response's own
// Set-Cookie slice, made here beforehand).
func TestHexPairOneAllocation(t *testing.T) {
	p := cookies.Writer{Secure: true}.PrepareHexPair("__Host-next-auth.csrf-token", '|')
	a, b := []byte(strings.Repeat("\xab", 32)), []byte(strings.Repeat("\xcd", 32))
	want := strings.Repeat("ab", 32)
	rec := httptest.NewRecorder()
	rec.Header()["Set-Cookie"] = make([]string, 0, 1)
	allocs := testing.AllocsPerRun(100, func() {
		rec.Header()["Set-Cookie"] = rec.Header()["Set-Cookie"][:0]
		if p.Set(rec, a, b) != want {
			t.Fatal("wrong part")
		}
	})
	require.Equal(t, 1.0, allocs)
}

func BenchmarkHexPairSet(b *testing.B) {
	p := cookies.Writer{}.PrepareHexPair("next-auth.csrf-token", '|')
	x, y := []byte(strings.Repeat("\xab", 32)), []byte(strings.Repeat("\xcd", 32))
	rec := httptest.NewRecorder()
	rec.Header()["Set-Cookie"] = make([]string, 0, 1)
	b.ReportAllocs()
	for b.Loop() {
		rec.Header()["Set-Cookie"] = rec.Header()["Set-Cookie"][:0]
		p.Set(rec, x, y)
	}
}
