package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
)

// BenchmarkGetSessionHTTPS is GET /session under an https SERVICE_URL,
// whose answers carry Strict-Transport-Security besides the headers of
// the http benchmarks: a first visit (no cookie: {} and two Set-Cookie
// lines) and a signed-in jwt browser; and forward-auth's auth-request for
// that browser (all three Remote-* headers).
func BenchmarkGetSessionHTTPS(b *testing.B) {
	const serviceURL = "https://auth.example.com/api/auth"
	tok := strings.Repeat("5a", 32)
	browser := "__Host-next-auth.csrf-token=" + cookies.Encode(tok+"|"+csrfHash(tok, testSecret)) +
		"; __Secure-next-auth.callback-url=" + cookies.Encode("https://auth.example.com")
	b.Run("nocookie", func(b *testing.B) {
		e := startEnv(b, envOpts{config: func(c *config.Config) { c.ServiceURL = serviceURL }})
		benchGet(b, e.app.Handler(), e.path+"/session", "", func(rec *httptest.ResponseRecorder) bool {
			return rec.Code == http.StatusOK && rec.Body.String() == "{}" && len(rec.Header()["Set-Cookie"]) == 2
		})
	})
	b.Run("jwt", func(b *testing.B) {
		e := startEnv(b, envOpts{strategy: config.StrategyJWT, config: func(c *config.Config) { c.ServiceURL = serviceURL }})
		jwt := jwtCookie(b, map[string]any{"name": "Bench", "email": "bench@example.com", "picture": "https://img.example.com/b.png", "sub": "user-1", "auth_time": time.Now().Unix()}, time.Now())
		benchGet(b, e.app.Handler(), e.path+"/session", browser+"; __Secure-next-auth.session-token="+jwt, func(rec *httptest.ResponseRecorder) bool {
			return rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), `"expires"`) && rec.Header()["Set-Cookie"] == nil
		})
	})
	b.Run("authrequest", func(b *testing.B) {
		e := startEnv(b, envOpts{strategy: config.StrategyJWT, config: func(c *config.Config) { c.ServiceURL = serviceURL }})
		jwt := jwtCookie(b, map[string]any{"name": "Bench", "email": "bench@example.com", "sub": "user-1", "auth_time": time.Now().Unix()}, time.Now())
		benchGet(b, e.app.Handler(), "/authz/auth-request", "__Secure-next-auth.session-token="+jwt, func(rec *httptest.ResponseRecorder) bool {
			return rec.Code == http.StatusOK && rec.Header().Get("Remote-Name") == "Bench"
		})
	})
}
