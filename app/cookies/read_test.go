package cookies_test

import (
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// Value must find what r.Cookie finds, for every Cookie header net/http
// accepts or skips: it replaces r.Cookie on every request.
func TestValueMatchesRequestCookie(t *testing.T) {
	const name = "next-auth.csrf-token"
	pieces := []string{
		name, "next-auth.csrf-tokens", "other", "a", "b c", "x\x00", "ä", "(", "",
		"=", "==", ";", "; ", " ;", ";;", " ", "\t", `"`, `""`, `"v"`, `"v`, `v"`,
		"v", "%7C", "a|b", `\`, ",", "\x7f", "\x1f", "é", "=v", "=\"q\"",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(lines ...string) {
		r := &http.Request{Header: http.Header{"Cookie": lines}}
		want, err := r.Cookie(name)
		got, ok := cookies.Value(r, name)
		require.Equal(t, err == nil, ok, "%q", lines)
		if ok {
			require.Equal(t, want.Value, got, "%q", lines)
		}
	}
	for range 20000 {
		lines := make([]string, 1+rng.IntN(2))
		for i := range lines {
			var b strings.Builder
			for range rng.IntN(12) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			lines[i] = b.String()
		}
		check(lines...)
	}
	check()
	check(name + `="quoted"`)
	check("other=1; " + name + "=first; " + name + "=second")
	check(name+"=bad\\; other=1", name+"=second-line")
	// net/http's limit: more than 3000 cookies on a request and it has none.
	many := strings.Repeat("a=1; ", 2999) + name + "=v"
	check(many)
	check(many + "; b=2")
	check(strings.Repeat("a=1; ", 1500), strings.Repeat("a=1; ", 1499)+name+"=v")
}

// Looking up a cookie allocates nothing.
func TestValueDoesNotAllocate(t *testing.T) {
	r := &http.Request{Header: http.Header{"Cookie": {"next-auth.csrf-token=abc%7Cdef; next-auth.callback-url=http%3A%2F%2Flocalhost%3A3000; next-auth.session-token=tok"}}}
	allocs := testing.AllocsPerRun(100, func() {
		if v, ok := cookies.Value(r, "next-auth.session-token"); !ok || v != "tok" {
			t.Fatal(v, ok)
		}
		if _, ok := cookies.Value(r, "missing"); ok {
			t.Fatal("missing")
		}
		if cookies.ReadChunked(r, "next-auth.session-token") != "tok" {
			t.Fatal("chunked")
		}
		if tok, sum, found, ok := cookies.ReadCut(r, "next-auth.csrf-token", '|'); !ok || !found || tok != "abc" || sum != "def" {
			t.Fatal("csrf", tok, sum, found, ok)
		}
	})
	require.Zero(t, allocs)
}

// ReadCut is Read followed by strings.Cut, for every raw value: literal
// and escaped separators, escapes of other bytes, malformed escapes.
func TestReadCutMatchesReadAndCut(t *testing.T) {
	const name = "c"
	pieces := []string{"a", "0f", "|", "%7C", "%7c", "%7", "%", "%zz", "%25", "%257C", "%2F", "%7C%7C", "||", "%C3%A9", "+", "%20"}
	rng := rand.New(rand.NewPCG(13, 14))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		raw := b.String()
		r := &http.Request{Header: http.Header{"Cookie": {name + "=" + raw}}}
		v, okRead := cookies.Read(r, name)
		before, after, found, ok := cookies.ReadCut(r, name, '|')
		require.Equal(t, okRead, ok, "%q", raw)
		if !ok {
			continue
		}
		wantBefore, wantAfter, wantFound := strings.Cut(v, "|")
		require.Equal(t, []any{wantBefore, wantAfter, wantFound}, []any{before, after, found}, "%q", raw)
	}
	_, _, _, ok := cookies.ReadCut(&http.Request{Header: http.Header{}}, name, '|')
	require.False(t, ok, "no cookie")
}

// readChunkedReference is ReadChunked as it was written on r.Cookies().
func readChunkedReference(r *http.Request, name string) string {
	type part struct {
		n int
		v string
	}
	var parts []part
	for _, c := range r.Cookies() {
		rest, ok := strings.CutPrefix(c.Name, name)
		if !ok {
			continue
		}
		n := -1
		if rest != "" {
			digits, ok := strings.CutPrefix(rest, ".")
			if !ok || digits == "" || len(digits) > 2 || len(digits) > 1 && digits[0] == '0' || strings.Trim(digits, "0123456789") != "" {
				continue
			}
			n, _ = strconv.Atoi(digits)
			if n > 64 {
				continue
			}
		}
		parts = append(parts, part{n, c.Value})
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].n < parts[j].n })
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.v)
	}
	return b.String()
}

// ReadChunked finds the chunks r.Cookies() finds, in the same order.
func TestReadChunkedMatchesCookies(t *testing.T) {
	const name = "s"
	pieces := []string{"s=a", "s.0=b", "s.1=c", "s.10=d", "s.01=e", "s.65=f", "s.64=g", "s.x=h", "st=i", "s.2=\"q\"", "s.3=bad\\",
		"s.4=", "t=j", "; ", ";", " ", "s.1=k", "s", "=s", "t=bad\\", "t y=z", "t=\"q"}
	rng := rand.New(rand.NewPCG(15, 16))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString("; ")
		}
		r := &http.Request{Header: http.Header{"Cookie": {b.String()}}}
		require.Equal(t, readChunkedReference(r, name), cookies.ReadChunked(r, name), "%q", b.String())
	}
}
