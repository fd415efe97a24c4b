package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/metrics/metricstest"
)

// Metrics off is a nil *Metrics: every method does nothing, and a route's
// metrics are nil too.
func TestNilMetricsDoNothing(t *testing.T) {
	var m *metrics.Metrics
	require.Nil(t, m.Route("/x"))
	m.Route("/x").Observe(200, time.Millisecond)
	countOnceEach(m)
}

// countOnceEach moves every counter without labels, and one sign-in.
func countOnceEach(m *metrics.Metrics) {
	m.SignIn("email", "Verification")
	m.SignOut()
	m.SessionCreated()
	m.EmailSent()
	m.EmailFailed()
	m.RateLimitRefusal("global")
	m.DBError()
}

// Two metric sets never share a registry, and each counter appears under
// its exact name.
func TestMetricsExposition(t *testing.T) {
	m, other := metrics.New(metrics.Build{Version: "v1.2.3", Commit: "0123abc", GoVersion: "go1.26.8"}), metrics.New(metrics.Build{})
	r := m.Route("/api/auth/session")
	r.Observe(200, 2*time.Millisecond)
	r.Observe(200, 3*time.Millisecond)
	r.Observe(1000, time.Millisecond) // outside the table of codes
	countOnceEach(m)
	other.SignOut()

	s := scrapeHandler(t, m)
	require.Equal(t, 2.0, s.Value("latchkey_http_requests_total", "route", "/api/auth/session", "code", "200"))
	require.Equal(t, 1.0, s.Value("latchkey_http_requests_total", "route", "/api/auth/session", "code", "other"))
	require.Equal(t, 3.0, s.Value("latchkey_http_request_duration_seconds", "route", "/api/auth/session"))
	require.Equal(t, 1.0, s.Value("latchkey_signins_total", "provider", "email", "outcome", "Verification"))
	for _, name := range []string{"latchkey_signouts_total", "latchkey_sessions_created_total", "latchkey_emails_sent_total",
		"latchkey_emails_failed_total", "latchkey_db_errors_total"} {
		require.Equal(t, 1.0, s.Value(name), name)
	}
	require.Equal(t, 1.0, s.Value("latchkey_ratelimit_refusals_total", "tier", "global"))
	require.Equal(t, 1.0, s.Value("latchkey_build_info", "version", "v1.2.3", "commit", "0123abc", "goversion", "go1.26.8"))
	require.Equal(t, 1.0, scrapeHandler(t, other).Value("latchkey_build_info", "version", "unknown", "commit", "unknown", "goversion", "unknown"))
	require.True(t, s.Has("go_gc_duration_seconds"))
	require.True(t, s.Has("process_open_fds"))
	require.Equal(t, 1.0, scrapeHandler(t, other).Value("latchkey_signouts_total"), "registries of their own")
}

func scrapeHandler(t *testing.T, m *metrics.Metrics) metricstest.Samples {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return metricstest.Parse(t, rec.Body)
}
