package client_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/client"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	u, _ := client.UserFrom(r.Context())
	_, _ = w.Write([]byte("hello " + u.Email))
})

func pagesMiddleware(t *testing.T, resolver client.Resolver) *client.Middleware {
	t.Helper()
	m, err := client.New(resolver, client.Options{Redirect: true, SignInBase: "https://auth.example.com/api/auth/", PublicOrigin: "https://app.example.com"})
	require.NoError(t, err)
	return m
}

func localResolver(t *testing.T) *client.Local {
	t.Helper()
	l, err := client.NewLocal(client.LocalOptions{Secrets: []string{secret}})
	require.NoError(t, err)
	return l
}

// The callback URL is the configured origin plus the request's path and
// query, whatever Host, absolute-form target or path the client sent.
func TestRedirectNeverNamesAForeignHost(t *testing.T) {
	h := pagesMiddleware(t, localResolver(t)).RequireUser(ok)
	signIn := "https://auth.example.com/api/auth/signin?callbackUrl="
	for raw, back := range map[string]string{
		"GET /page?x=1&y=%2F HTTP/1.1\r\nHost: evil.example\r\n\r\n":          "https://app.example.com/page?x=1&y=%2F",
		"GET http://evil.example/page HTTP/1.1\r\nHost: evil.example\r\n\r\n": "https://app.example.com/page",
		"GET //evil.example/x HTTP/1.1\r\nHost: app.example.com\r\n\r\n":      "https://app.example.com/evil.example/x",
		"GET /\\evil.example HTTP/1.1\r\nHost: app.example.com\r\n\r\n":       "https://app.example.com/%5Cevil.example",
		"GET * HTTP/1.1\r\nHost: app.example.com\r\n\r\n":                     "https://app.example.com/*",
	} {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		require.NoError(t, err, raw)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		require.Equal(t, http.StatusFound, w.Code, raw)
		loc := w.Header().Get("Location")
		require.Equal(t, signIn+url.QueryEscape(back), loc, raw)
		target, err := url.Parse(loc)
		require.NoError(t, err)
		cb, err := url.Parse(target.Query().Get("callbackUrl"))
		require.NoError(t, err)
		require.Equal(t, "app.example.com", cb.Host, raw)
	}
}

func TestRefusals(t *testing.T) {
	local := localResolver(t)
	pages := pagesMiddleware(t, local)
	api, err := client.New(local, client.Options{})
	require.NoError(t, err)

	w := httptest.NewRecorder()
	api.RequireUser(ok).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api", nil))
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Equal(t, "no-store", w.Header().Get("Cache-Control"))

	w = httptest.NewRecorder()
	pages.RequireUser(ok).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/form", nil))
	require.Equal(t, http.StatusUnauthorized, w.Code, "a POST is not redirected: its body would be lost")

	w = httptest.NewRecorder()
	api.Handler(ok).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/public", nil))
	require.Equal(t, "hello ", w.Body.String(), "Handler lets nobody through")

	tok := mint(t, secret, "next-auth.session-token", jwt.V4, claims, time.Hour, time.Now())
	req := httptest.NewRequest(http.MethodGet, "/api", nil)
	req.Header.Set("Cookie", "next-auth.session-token="+tok)
	w = httptest.NewRecorder()
	api.Handler(api.RequireUser(ok)).ServeHTTP(w, req)
	require.Equal(t, "hello ada@example.com", w.Body.String())
}

func TestOptionsAreChecked(t *testing.T) {
	local := localResolver(t)
	for name, o := range map[string]client.Options{
		"open on outage":        {UnavailableStatus: http.StatusOK},
		"redirect without base": {Redirect: true, PublicOrigin: "https://app.example.com"},
		"origin with a path":    {Redirect: true, SignInBase: "https://a.example.com/api/auth", PublicOrigin: "https://app.example.com/x"},
		"relative origin":       {Redirect: true, SignInBase: "https://a.example.com/api/auth", PublicOrigin: "app.example.com"},
	} {
		_, err := client.New(local, o)
		require.Error(t, err, name)
	}
	_, err := client.New(nil, client.Options{})
	require.Error(t, err)
	for _, u := range []string{"", "latchkey:3000/api/auth", "ftp://x/api/auth", "http://user:pw@x/api/auth", "http://x/api/auth?q=1"} {
		_, err := client.NewRemote(client.RemoteOptions{URL: u})
		require.Error(t, err, u)
	}
}

// A latchkey that accepts the connection but never answers: every lookup
// ends at the time-out and the request is refused with the configured
// status, in time.
func TestRemoteFailsClosedWithinItsTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close() // never accepted: the kernel completes the handshake, nobody reads

	remote, err := client.NewRemote(client.RemoteOptions{URL: "http://" + ln.Addr().String() + "/api/auth", Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	for _, status := range []int{0, http.StatusUnauthorized} {
		m, err := client.New(remote, client.Options{UnavailableStatus: status})
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodGet, "/api", nil)
		req.Header.Set("Cookie", "next-auth.session-token=some-token")
		w := httptest.NewRecorder()
		start := time.Now()
		m.RequireUser(ok).ServeHTTP(w, req)
		require.Less(t, time.Since(start), 2*time.Second)
		want := status
		if want == 0 {
			want = http.StatusServiceUnavailable
		}
		require.Equal(t, want, w.Code)
		require.NotContains(t, w.Body.String(), "hello")
	}
}
