package multi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// Real sign-ins against a real process move its counters by exactly what
// happened, read from the metrics listener with Prometheus's text parser:
// an e-mail sign-in (counted once, when its link is redeemed), an OAuth
// sign-in, failures with their NextAuth codes, a sign-out, the e-mails
// sent and a rate-limit refusal. Labels are route patterns and configured
// provider ids only; the public port does not serve /metrics.
func TestMetricsCountWhatHappened(t *testing.T) {
	c := newClusterWith(t, pgtest.NewDatabase(t, adminURL), "      per_address: 1\n")
	metricsEnv, metricsURL := withMetrics(t)
	a := c.startWith("A", c.dbURL, metricsEnv)
	before := scrape(t, metricsURL)
	for _, family := range []string{"go_goroutines", "process_resident_memory_bytes", "latchkey_http_requests_total"} {
		require.True(t, before.Has(family), family)
	}
	sessionGets := 0

	// An e-mail sign-in, then its link opened again (spent: Verification).
	amy := c.browser()
	c.signInByEmail(amy, a, "amy@example.com")
	require.Equal(t, "amy@example.com", amy.email(a))
	sessionGets++
	r := c.browser().get(c.at(a, c.linkFor("amy@example.com")))
	require.Equal(t, c.publicURL("/error?error=Verification"), r.location())
	// A second link for the same address is over per_address: refused.
	r = amy.post(a.url("/signin/email"), url.Values{"csrfToken": {amy.csrf(a)}, "email": {"amy@example.com"}})
	require.Equal(t, c.publicURL("/error?error=EmailSignin"), r.location())
	require.Equal(t, http.StatusFound, amy.signOut(a).StatusCode)
	require.Empty(t, amy.email(a))
	sessionGets++

	// An OAuth sign-in through the IdP, and a callback with the IdP's refusal.
	c.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-ben", Email: "ben@example.com", EmailVerified: true, PreferredUsername: "ben"})
	ben := c.browser()
	r = ben.post(a.url("/signin/idp"), url.Values{"csrfToken": {ben.csrf(a)}, "callbackUrl": {c.origin() + "/app"}})
	r = ben.get(r.location())
	r = ben.get(c.at(a, r.location()))
	require.Equal(t, c.origin()+"/app", r.location(), r.body)
	require.Equal(t, "ben@example.com", ben.email(a))
	sessionGets++
	r = c.browser().get(a.url("/callback/idp?error=access_denied"))
	require.Equal(t, c.publicURL("/error?error=Callback"), r.location())

	s := scrape(t, metricsURL)
	moved := func(name string, labels ...string) float64 {
		return s.Value(name, labels...) - before.Value(name, labels...)
	}
	require.Equal(t, 1.0, moved("latchkey_signins_total", "provider", "email", "outcome", "success"))
	require.Equal(t, 1.0, moved("latchkey_signins_total", "provider", "email", "outcome", "Verification"))
	require.Equal(t, 1.0, moved("latchkey_signins_total", "provider", "email", "outcome", "EmailSignin"), "the refused link request")
	require.Equal(t, 1.0, moved("latchkey_signins_total", "provider", "idp", "outcome", "success"))
	require.Equal(t, 1.0, moved("latchkey_signins_total", "provider", "idp", "outcome", "Callback"))
	require.Equal(t, 2.0, moved("latchkey_sessions_created_total"))
	require.Equal(t, 1.0, moved("latchkey_signouts_total"))
	require.Equal(t, 1.0, moved("latchkey_emails_sent_total"))
	require.Equal(t, 0.0, moved("latchkey_emails_failed_total"))
	require.Equal(t, 1.0, moved("latchkey_ratelimit_refusals_total", "tier", "addr"))
	require.Equal(t, 0.0, moved("latchkey_db_errors_total"))
	require.Equal(t, float64(sessionGets), moved("latchkey_http_requests_total", "route", "/api/auth/session", "code", "200"))
	require.Equal(t, float64(sessionGets), moved("latchkey_http_request_duration_seconds", "route", "/api/auth/session"))
	require.Equal(t, 4.0, moved("latchkey_http_requests_total", "route", "/api/auth/callback/:provider", "code", "302"))

	require.ElementsMatch(t, []string{"email", "email", "email", "idp", "idp"}, s.LabelValues("latchkey_signins_total", "provider"))
	for _, route := range s.LabelValues("latchkey_http_requests_total", "route") {
		ok := route == "unmatched" || strings.HasPrefix(route, "/api/auth/") || strings.HasPrefix(route, "/health/")
		require.True(t, ok, "route label %q", route)
		require.NotContains(t, route, "@")
		require.NotContains(t, route, "?")
		require.NotContains(t, route, "/callback/email", "a pattern, never the raw path")
	}

	// Never on the public port.
	require.Equal(t, http.StatusNotFound, c.browser().get(a.origin+"/metrics").StatusCode)
	require.NotContains(t, c.browser().get(a.url("/metrics")).body, "latchkey_")

	// The metrics listener lives and dies with the service.
	a.stop(t)
	_, err := http.Get(metricsURL)
	require.Error(t, err, "the metrics listener is closed with the service")
}

// A metrics address on the service's own port is refused at start-up
// with a line that says so.
func TestMetricsNeverOnThePublicPort(t *testing.T) {
	c := newCluster(t, pgtest.NewDatabase(t, adminURL))
	port := freePort(t)
	in := c.run("same-port", append(c.env(port, c.dbURL), "METRICS_ADDR=127.0.0.1:"+strconv.Itoa(port)))
	require.Equal(t, 1, in.exitCode(t))
	require.Contains(t, in.logs.String(), "metrics.listen (METRICS_ADDR): port "+strconv.Itoa(port)+" is the service's own port")
}
