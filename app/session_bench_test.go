package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
)

// benchSession measures GET /session through the real handler (routing,
// init with a valid CSRF cookie, session lookup, JSON) for one cookie header.
func benchSession(b *testing.B, e *env, cookieHeader string) {
	b.Helper()
	benchGet(b, e.app.Handler(), e.path+"/session", cookieHeader, func(rec *httptest.ResponseRecorder) bool {
		signedIn := strings.Contains(rec.Body.String(), `"expires"`)
		return rec.Code == http.StatusOK && signedIn == strings.Contains(cookieHeader, "session-token")
	})
}

// benchGet measures GET target on h with one cookie header. The request
// and recorder are built inside the loop for every benchmark alike, so
// the ratio of two benchmarks' ns/op compares the handlers, not httptest.
// ok checks one answer first, so a broken setup cannot pass as fast.
func benchGet(b *testing.B, h http.Handler, target, cookieHeader string, ok func(*httptest.ResponseRecorder) bool) {
	b.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Cookie", cookieHeader)
	h.ServeHTTP(rec, req)
	if !ok(rec) {
		b.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body.String())
	}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Cookie", cookieHeader)
		h.ServeHTTP(rec, req)
	}
}

// browserCookieHeader are the cookies a browser holds after GET /csrf.
func browserCookieHeader() string {
	tok := strings.Repeat("5a", 32)
	return "next-auth.csrf-token=" + cookies.Encode(tok+"|"+csrfHash(tok, testSecret)) +
		"; next-auth.callback-url=" + cookies.Encode("http://localhost:3000")
}

// BenchmarkGetSessionDatabase runs the database strategy on SQLite and on
// PostgreSQL (a throwaway local cluster) in one run, so their figures can be
// compared: answered from the lookup cache (session.cache_ttl, the
// default: the cookie is read again and again within the TTL, as a page
// load's calls and forward-auth do) and, with cache_ttl: 0, one prepared,
// indexed query per call.
func BenchmarkGetSessionDatabase(b *testing.B) {
	for _, db := range []struct {
		name     string
		postgres bool
	}{{"sqlite", false}, {"postgres", true}} {
		for _, cache := range []struct {
			name string
			ttl  time.Duration
		}{{"cached", time.Second}, {"query", 0}} {
			b.Run(db.name+"/"+cache.name, func(b *testing.B) {
				e := startEnv(b, envOpts{postgres: db.postgres, config: func(c *config.Config) { c.Session.CacheTTL = config.Duration(cache.ttl) }})
				u := e.addUser("Bench", "bench@example.com", "https://img.example.com/b.png")
				tok := e.addDBSession(u, time.Now().Add(30*24*time.Hour))
				benchSession(b, e, browserCookieHeader()+"; next-auth.session-token="+tok)
			})
		}
	}
}

func BenchmarkGetSessionJWT(b *testing.B) {
	e := startEnv(b, envOpts{strategy: config.StrategyJWT})
	// The claims latchkey writes: next-auth's four plus auth_time (the sign-in).
	tok := jwtCookie(b, map[string]any{"name": "Bench", "email": "bench@example.com", "picture": "https://img.example.com/b.png", "sub": "user-1", "auth_time": time.Now().Unix()}, time.Now())
	benchSession(b, e, browserCookieHeader()+"; next-auth.session-token="+tok)
}

func BenchmarkGetSessionNone(b *testing.B) {
	e := startEnv(b, envOpts{})
	benchSession(b, e, browserCookieHeader())
}

// BenchmarkGetCSRF is GET /csrf from a browser that already holds a valid
// CSRF cookie: the cookie is parsed and verified, and its token answered;
// nothing is set.
func BenchmarkGetCSRF(b *testing.B) {
	e := startEnv(b, envOpts{})
	benchGet(b, e.app.Handler(), e.path+"/csrf", browserCookieHeader(), func(rec *httptest.ResponseRecorder) bool {
		return rec.Code == http.StatusOK && rec.Body.String() == `{"csrfToken":"`+strings.Repeat("5a", 32)+"\"}\n" &&
			rec.Header().Get("Set-Cookie") == ""
	})
}

// BenchmarkBare is the yardstick: a bare Echo handler answering {} through
// the same request and recorder as the benchmarks above. latchkey's figures
// are read as ratios to it (ns/op of BenchmarkBare / ns/op of the route).
func BenchmarkBare(b *testing.B) {
	e := echo.New()
	body := []byte("{}")
	e.GET("/api/auth/session", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, body) })
	benchGet(b, e, "/api/auth/session", browserCookieHeader(), func(rec *httptest.ResponseRecorder) bool {
		return rec.Code == http.StatusOK && rec.Body.String() == "{}"
	})
}
