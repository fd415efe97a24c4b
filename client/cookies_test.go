package client

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOnlySessionCookiesAreForwarded(t *testing.T) {
	r, err := http.NewRequest(http.MethodGet, "http://app.example.com/", nil)
	require.NoError(t, err)
	r.Header.Add("Cookie", "theme=dark; next-auth.session-token.1=BBB; next-auth.csrf-token=abc%7Cdef")
	r.Header.Add("Cookie", "next-auth.session-token.0=AAA; app_session=private; next-auth.session-token.01=x; "+
		"next-auth.session-token.65=x; next-auth.session-tokens=x; authjs.session-token=CCC")
	require.Equal(t, "next-auth.session-token.1=BBB; next-auth.session-token.0=AAA; authjs.session-token=CCC",
		sessionCookieHeader(r, DefaultCookieNames()))
	require.Equal(t, "authjs.session-token=CCC", sessionCookieHeader(r, []string{"authjs.session-token"}))

	r.Header.Set("Cookie", "theme=dark")
	require.Empty(t, sessionCookieHeader(r, DefaultCookieNames()))

	r.Header.Set("Cookie", "next-auth.session-token.0="+strings.Repeat("a", 4000))
	for i := 1; i < 20; i++ {
		r.Header.Add("Cookie", "next-auth.session-token."+string(rune('0'+i%10))+"="+strings.Repeat("a", 4000))
	}
	require.Empty(t, sessionCookieHeader(r, DefaultCookieNames()), "over 64 KiB is no session")
}
