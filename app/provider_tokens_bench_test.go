package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/latchkey-auth/latchkey/app/config"
)

// cookieHeaderOf is the Cookie header e's default browser sends to target.
func (e *tokenEnv) cookieHeaderOf(target string) string {
	var parts []string
	for _, ck := range e.client.Jar.Cookies(mustParse(e.t, e.url(target))) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}

// BenchmarkGetProviderToken is GET /token/idp for a fresh token through
// the real handler on SQLite: the access check, the session lookup, one
// account read and one unsealing. No provider call.
func BenchmarkGetProviderToken(b *testing.B) {
	e := startTokens(b, false, nil)
	cookie := e.cookieHeaderOf("/token/idp")
	h, target := e.app.Handler(), e.path+"/token/idp"
	do := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Cookie", cookie)
		req.Header.Set("Authorization", "Bearer "+clientSecret)
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do(); rec.Code != http.StatusOK {
		b.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		do()
	}
}

// BenchmarkGetSessionTokenMark is GET /session (database strategy, SQLite,
// the session cache on) with a provider that keeps tokens, where the
// answer carries the refresh mark (read from its 1 s cache), beside the
// same with store_tokens off: the mark's cost on the hottest route.
func BenchmarkGetSessionTokenMark(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "store_tokens-off"
		if on {
			name = "store_tokens-on"
		}
		b.Run(name, func(b *testing.B) {
			e := startTokens(b, false, func(c *config.Config) { c.Providers[0].StoreTokens = on })
			benchSession(b, e.env, e.cookieHeaderOf("/session"))
		})
	}
}
