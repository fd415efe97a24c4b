package app_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics/metricstest"
)

// The health checks answer at the root, outside the base path, with no
// cookies, for GET and HEAD. Readiness follows the SQLite file: moved away
// (as a lost volume or a careless clean-up would), the open connections
// would go on writing to a file no one will read again, so the instance
// reports 503 until the file is back.
func TestHealthEndpoints(t *testing.T) {
	e := startEnv(t, envOpts{ownURL: true})
	root := func(method, path string) resp {
		t.Helper()
		req, err := http.NewRequest(method, e.srv.URL+path, nil)
		require.NoError(t, err)
		return e.do(noRedirects(e.browser()), req)
	}
	for _, path := range []string{"/health/live", "/health/ready"} {
		r := root(http.MethodGet, path)
		require.Equal(t, http.StatusOK, r.StatusCode, path)
		require.JSONEq(t, `{"status":"ok"}`, r.body)
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		require.Empty(t, r.Header.Values("Set-Cookie"), "no cookies")
		require.Regexp(t, `^[0-9a-f]{32}$`, r.Header.Get("X-Request-Id"))
		r = root(http.MethodHead, path)
		require.Equal(t, http.StatusOK, r.StatusCode, "HEAD %s", path)
		require.Empty(t, r.body)
		require.Equal(t, http.StatusBadRequest, root(http.MethodGet, e.path+path).StatusCode, "not below the base path")
	}

	db := e.cfg.DatabasePath()
	require.NoError(t, os.Rename(db, db+".moved"))
	waitReady(t, root, http.StatusServiceUnavailable)
	r := root(http.MethodGet, "/health/ready")
	require.JSONEq(t, `{"status":"unavailable","reason":"database"}`, r.body)
	require.Equal(t, http.StatusOK, root(http.MethodGet, "/health/live").StatusCode, "alive all the same")

	require.NoError(t, os.Rename(db+".moved", db))
	waitReady(t, root, http.StatusOK)

	if os.Geteuid() != 0 { // root opens any file whatever its mode
		require.NoError(t, os.Chmod(db, 0))
		waitReady(t, root, http.StatusServiceUnavailable)
		require.NoError(t, os.Chmod(db, 0o600))
		waitReady(t, root, http.StatusOK)
	}
}

// waitReady polls GET /health/ready until it answers want (a result is
// reused for a second).
func waitReady(t *testing.T, root func(method, path string) resp, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := root(http.MethodGet, "/health/ready")
		if r.StatusCode == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /health/ready: %d %s, want %d", r.StatusCode, r.body, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// One access line per request, with the route pattern (never the path or
// its query, which carries the link's token and address), the status and
// the request id echoed in the response; the id a trusted proxy sends is
// kept, anyone else's replaced.
func TestAccessLog(t *testing.T) {
	e := startMail(t, envOpts{config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
	br := e.browser()
	link := e.emailLink(br, "alice@example.com", e.origin+"/app")
	req, err := http.NewRequest(http.MethodGet, e.url(link), nil)
	require.NoError(t, err)
	req.URL.Host = strings.TrimPrefix(e.srv.URL, "http://")
	req.Header.Set("X-Request-Id", "proxy-id-42")
	r := e.do(noRedirects(br), req)
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(t, "proxy-id-42", r.Header.Get("X-Request-Id"))

	logs := e.logs.String()
	require.Contains(t, logs, `msg=request method=GET route=/api/auth/callback/:provider status=302 duration=`)
	require.Contains(t, logs, `request_id=proxy-id-42`)
	require.Contains(t, logs, `msg=request method=POST route=/api/auth/signin/:provider status=302`)
	q := linkQuery(t, link)
	for _, secret := range []string{q.Get("token"), "alice@example.com", "/callback/email"} {
		require.NotContains(t, logs, secret)
	}

	r = e.rawDo(http.MethodGet, "/nowhere?x=1", "", nil, "X-Request-Id", "bad id")
	require.Regexp(t, `^[0-9a-f]{32}$`, r.Header.Get("X-Request-Id"), "an insane id is replaced")
	require.Contains(t, e.logs.String(), `route=unmatched status=400 duration=`)
	require.Contains(t, e.logs.String(), "request_id="+r.Header.Get("X-Request-Id"))
}

// With log.access: false no access lines are written; everything else is.
func TestAccessLogOff(t *testing.T) {
	e := startMail(t, envOpts{config: func(c *config.Config) { c.Log.Access = false }})
	e.emailLink(e.browser(), "bob@example.com", e.origin+"/")
	require.NotContains(t, e.logs.String(), "msg=request ")
	require.Contains(t, e.logs.String(), "sign-in e-mail delivered")
}

// Metrics, read in process through the handler the metrics listener
// serves, move with what users do, in both session strategies; with
// metrics off there is no handler at all.
func TestMetricsCountSignInsAndRequests(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy, config: func(c *config.Config) { c.Metrics.Listen = "127.0.0.1:0" }})
			scrape := func() metricstest.Samples {
				rec := httptest.NewRecorder()
				e.app.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				require.Equal(t, http.StatusOK, rec.Code)
				return metricstest.Parse(t, bytes.NewReader(rec.Body.Bytes()))
			}
			before := scrape()
			require.True(t, before.Has("go_goroutines"), "Go runtime collector")
			require.True(t, before.Has("process_cpu_seconds_total"), "process collector")

			br := e.browser()
			link := e.emailLink(br, "carol@example.com", e.origin+"/app")
			require.Equal(t, http.StatusFound, e.get(noRedirects(br), link).StatusCode)
			e.get(noRedirects(e.browser()), link) // spent: Verification
			require.Equal(t, "carol@example.com", userEmail(e.session(br)))
			require.Equal(t, http.StatusFound, e.post(noRedirects(br), "/signout", map[string][]string{"csrfToken": {e.csrf(br)}}).StatusCode)

			s := scrape()
			require.Equal(t, 1.0, s.Value("latchkey_signins_total", "provider", "email", "outcome", "success"))
			require.Equal(t, 1.0, s.Value("latchkey_signins_total", "provider", "email", "outcome", "Verification"))
			require.Equal(t, 1.0, s.Value("latchkey_sessions_created_total"))
			require.Equal(t, 1.0, s.Value("latchkey_emails_sent_total"))
			require.Equal(t, 0.0, s.Value("latchkey_emails_failed_total"))
			require.Equal(t, 1.0, s.Value("latchkey_signouts_total"))
			require.Equal(t, 1.0, s.Value("latchkey_http_requests_total", "route", "/api/auth/session", "code", "200"))
			require.Equal(t, 2.0, s.Value("latchkey_http_requests_total", "route", "/api/auth/callback/:provider", "code", "302"))
			require.Equal(t, 1.0, s.Value("latchkey_http_request_duration_seconds", "route", "/api/auth/session"))
			for _, route := range s.LabelValues("latchkey_http_requests_total", "route") {
				require.NotContains(t, route, "email", "route patterns only")
			}
		})
	}
	e := startEnv(t, envOpts{})
	require.Nil(t, e.app.MetricsHandler(), "metrics off by default")
}
