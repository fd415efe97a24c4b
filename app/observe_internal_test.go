package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/proxies"
	"github.com/latchkey-auth/latchkey/app/web"
)

func TestSaneRequestID(t *testing.T) {
	for _, ok := range []string{
		"a", "0123456789abcdef0123456789abcdef", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
		"Root=1-67891233-abcdef012345678912345678", "req_01:x.y+z/w=", strings.Repeat("x", maxRequestIDLen),
	} {
		require.True(t, saneRequestID(ok), "%q is accepted", ok)
	}
	for _, bad := range []string{
		"", strings.Repeat("x", maxRequestIDLen+1), "two words", "line\nbreak", `quote"d`,
		"alice@example.com", "semi;colon", "tab\t", "é", "<script>", "a\x00b",
	} {
		require.False(t, saneRequestID(bad), "%q is refused", bad)
	}
}

func TestRequestIDComesFromTrustedProxiesOnly(t *testing.T) {
	a := &front{proxies: proxies.New([]string{"10.1.0.0/16", "2001:db8::/32"})}
	id := func(peer string, sent ...string) (string, []string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = peer
		for _, v := range sent {
			r.Header.Add(headerRequestID, v)
		}
		h := http.Header{}
		got := a.requestID(r, h)
		return got, h[headerRequestID]
	}
	got, echoed := id("10.1.2.3:5555", "from-proxy-1")
	require.Equal(t, "from-proxy-1", got)
	require.Equal(t, []string{"from-proxy-1"}, echoed)
	got, _ = id("[2001:db8::7]:443", "from-proxy-6")
	require.Equal(t, "from-proxy-6", got, "IPv6 proxies too")
	got, _ = id("[::ffff:10.1.9.9]:80", "mapped")
	require.Equal(t, "mapped", got, "an IPv4-mapped peer is its IPv4 address")

	for name, c := range map[string]struct {
		peer string
		sent []string
	}{
		"untrusted peer":      {"192.0.2.1:1234", []string{"spoofed"}},
		"no header":           {"10.1.2.3:5555", nil},
		"insane value":        {"10.1.2.3:5555", []string{"a b"}},
		"two values":          {"10.1.2.3:5555", []string{"one", "two"}},
		"too long":            {"10.1.2.3:5555", []string{strings.Repeat("y", maxRequestIDLen+1)}},
		"unparsable peer":     {"pipe", []string{"x"}},
		"outside the network": {"10.2.0.1:1", []string{"x"}},
	} {
		got, echoed := id(c.peer, c.sent...)
		require.Regexp(t, `^[0-9a-f]{32}$`, got, "%s: a generated id", name)
		require.Equal(t, []string{got}, echoed, "%s: echoed", name)
	}
	a.proxies = proxies.Trusted{}
	got, _ = id("10.1.2.3:5555", "from-proxy-1")
	require.NotEqual(t, "from-proxy-1", got, "no trusted proxies: no one's header is taken")
}

// The Referrer-Policy is added to every head but a JSON answer's, and the
// Content-Security-Policy to every head but a JSON answer's and a bodiless
// route's (forward-auth), however the head gets written: WriteHeader, a
// Write alone, a flush, or nothing at all (net/http then sends an empty 200
// once the handler returns).
func TestDocumentHeadersOnEveryHeadButJSON(t *testing.T) {
	a := &front{}
	policy := web.HeaderValue("default-src 'none'; frame-ancestors 'none'")
	a.csp.final.Store(&policy)
	json := func(ct string) func(x *exchange) {
		return func(x *exchange) {
			x.Header().Set("Content-Type", ct)
			x.WriteHeader(http.StatusOK)
		}
	}
	for name, c := range map[string]struct {
		write            func(x *exchange)
		policy, referrer bool
	}{
		"WriteHeader":           {func(x *exchange) { x.WriteHeader(http.StatusFound) }, true, true},
		"Write alone":           {func(x *exchange) { _, _ = x.Write([]byte("<p>hi")) }, true, true},
		"flush":                 {func(x *exchange) { require.NoError(t, http.NewResponseController(x).Flush()) }, true, true},
		"nothing written":       {func(*exchange) {}, true, true},
		"HTML":                  {json("text/html; charset=utf-8"), true, true},
		"SVG":                   {json("image/svg+xml"), true, true},
		"JSON":                  {json("application/json"), false, false},
		"JSON with a charset":   {json("Application/JSON; charset=UTF-8"), false, false},
		"JSON-like, not JSON":   {json("application/jsonp"), true, true},
		"JSON but written late": {func(x *exchange) { x.WriteHeader(http.StatusOK); x.Header().Set("Content-Type", "application/json") }, true, true},
		"a bodiless route":      {func(x *exchange) { x.route = &routeTag{bodiless: true}; x.WriteHeader(http.StatusOK) }, false, true},
		"another route":         {func(x *exchange) { x.route = &routeTag{}; x.WriteHeader(http.StatusOK) }, true, true},
	} {
		rec := httptest.NewRecorder()
		x := &exchange{front: a}
		x.reset(rec)
		c.write(x)
		x.finish()
		h := rec.Result().Header
		if c.policy {
			require.Equal(t, policy, h.Values("Content-Security-Policy"), name)
		} else {
			require.Empty(t, h.Values("Content-Security-Policy"), name)
		}
		if c.referrer {
			require.Equal(t, []string{"no-referrer"}, h.Values("Referrer-Policy"), name)
		} else {
			require.Empty(t, h.Values("Referrer-Policy"), name)
		}
	}
}
