package app_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
)

// BenchmarkAuthRequest measures GET /authz/auth-request, which a proxy
// calls on every request it passes on, beside BenchmarkGetSession*: the
// same session read, no CSRF cookie, no JSON.
func BenchmarkAuthRequest(b *testing.B) {
	for _, strategy := range strategies() {
		b.Run(strategy, func(b *testing.B) {
			e := startEnv(b, envOpts{strategy: strategy})
			// Verified: Remote-Email names a verified address only (issue 26 M2).
			u := e.addVerifiedUser("Bench", "bench@example.com")
			tok := jwtCookie(b, map[string]any{"name": "Bench", "email": "bench@example.com", session.VerifiedEmailClaim: "bench@example.com",
				"sub": u.ID, "auth_time": time.Now().Unix()}, time.Now())
			if strategy == config.StrategyDatabase {
				tok = e.addDBSession(u, time.Now().Add(30*24*time.Hour))
			}
			benchGet(b, e.app.Handler(), "/authz/auth-request", "next-auth.session-token="+tok, func(rec *httptest.ResponseRecorder) bool {
				return rec.Code == http.StatusOK && rec.Header().Get("Remote-Email") == "bench@example.com"
			})
		})
	}
}
