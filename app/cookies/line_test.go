package cookies_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// TestLineReadMatchesRead: a prepared line's Read answers as Read for
// every way the cookie can come back, and reads the prepared value itself
// without allocating.
func TestLineReadMatchesRead(t *testing.T) {
	const name, origin = "next-auth.callback-url", "http://127.0.0.1:3000"
	l := cookies.Writer{}.Prepare(name, origin)
	for _, header := range []string{
		name + "=http%3A%2F%2F127.0.0.1%3A3000", // as the line wrote it
		name + "=http%3a%2f%2f127.0.0.1%3a3000", // lower-case escapes
		name + "=http://127.0.0.1:3000",         // not encoded at all
		name + "=http%3A%2F%2Fevil.example",     // another value
		name + "=http%3A%2F%2F127.0.0.1%3A300",  // a prefix of it
		name + "=%zz",                           // malformed
		name + "=",                              // empty
		"other=1",                               // missing
		"",                                      // no cookies
		name + "=x; " + name + "=http%3A%2F%2F127.0.0.1%3A3000", // the first one counts
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if header != "" {
			r.Header.Set("Cookie", header)
		}
		wantV, wantOK := cookies.Read(r, name)
		gotV, gotOK := l.Read(r)
		require.Equal(t, wantOK, gotOK, header)
		require.Equal(t, wantV, gotV, header)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Cookie", "a=b; "+name+"=http%3A%2F%2F127.0.0.1%3A3000")
	allocs := testing.AllocsPerRun(100, func() {
		if v, ok := l.Read(r); !ok || v != origin {
			t.Fatal("not read")
		}
	})
	require.Zero(t, allocs)
}
