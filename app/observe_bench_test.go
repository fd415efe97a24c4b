package app_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// BenchmarkGetSessionJWTObserved is BenchmarkGetSessionJWT with what a
// production instance adds to every request: the access log line (JSON,
// written to io.Discard, so the formatting is measured, not the disk) and
// the HTTP metrics.
func BenchmarkGetSessionJWTObserved(b *testing.B) {
	cfg := testConfig(b)
	cfg.Session.Strategy = config.StrategyJWT
	cfg.Metrics.Listen = "127.0.0.1:0"
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(b, err)
	b.Cleanup(func() { _ = a.Close() })
	tok := jwtCookie(b, map[string]any{"name": "Bench", "email": "bench@example.com", "picture": "https://img.example.com/b.png", "sub": "user-1", "auth_time": time.Now().Unix()}, time.Now())
	benchGet(b, a.Handler(), a.Base().Path+"/session", browserCookieHeader()+"; next-auth.session-token="+tok, func(rec *httptest.ResponseRecorder) bool {
		return rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), `"expires"`)
	})
}
