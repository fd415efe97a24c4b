// Package metrics is latchkey's Prometheus metric set: one registry of its
// own (never the global default one), the counters the service moves, the
// Go runtime and process collectors, and the handler that exposes them.
//
// Every method is safe on a nil *Metrics and then does nothing, so the
// service calls them unconditionally and pays nothing when metrics are off.
// Label values come only from bounded sets: route patterns, HTTP status
// codes, configured provider ids and NextAuth error codes.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Outcome of a successful sign-in; a failed one is its NextAuth error code.
const OutcomeSuccess = "success"

// Metrics is the service's metric set.
type Metrics struct {
	registry *prometheus.Registry

	requests          *prometheus.CounterVec   // route, code
	duration          *prometheus.HistogramVec // route
	signIns           *prometheus.CounterVec   // provider, outcome
	rateLimitRefusals *prometheus.CounterVec   // tier
	secondSteps       *prometheus.CounterVec   // outcome

	signOuts, sessionsCreated, emailsSent, emailsFailed, dbErrors prometheus.Counter

	webhooks *Webhooks // webhooks.go

	codes [600]string // status code → label, so that labelling allocates nothing
}

// Build names the running binary in latchkey_build_info (main reads it
// from the build: `latchkey version`). Empty fields are "unknown".
type Build struct {
	Version, Commit, GoVersion string
}

// New registers the metric set, with the Go runtime and process
// collectors and the build's latchkey_build_info, on a registry of its own.
func New(build Build) *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry()}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		m.registry.MustRegister(c)
		return c
	}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "latchkey_http_requests_total",
		Help: "HTTP requests answered, by route pattern and status code.",
	}, []string{"route", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "latchkey_http_request_duration_seconds",
		Help: "Time to answer an HTTP request, by route pattern.",
		// From GET /session answered from memory (well under a
		// millisecond) to a slow identity provider during a callback.
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route"})
	m.signIns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "latchkey_signins_total",
		Help: "Sign-ins by provider and outcome: success or the NextAuth error code.",
	}, []string{"provider", "outcome"})
	m.rateLimitRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "latchkey_ratelimit_refusals_total",
		Help: "E-mails (sign-in links, sign-up and reset mails) refused by a rate limit, by tier: ip, net (IPv6 /48), net4 (IPv4 /24), global, addr, ceiling.",
	}, []string{"tier"})
	m.secondSteps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "latchkey_second_steps_total",
		Help: "Two-factor codes posted (a second step, a step-up, an enrolment), by outcome: success, or the refusal's code (TwoFactorInvalid, TwoFactorExpired, TwoFactorThrottled, TwoFactorSetupRequired, ...).",
	}, []string{"outcome"})
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "latchkey_build_info",
		Help: "Always 1; its labels name the running build: version, VCS commit and Go version.",
		ConstLabels: prometheus.Labels{
			"version": orUnknown(build.Version), "commit": orUnknown(build.Commit), "goversion": orUnknown(build.GoVersion),
		},
	})
	info.Set(1)
	m.registry.MustRegister(m.requests, m.duration, m.signIns, m.rateLimitRefusals, m.secondSteps, info,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.signOuts = counter("latchkey_signouts_total", "Sign-outs (POST /signout and /signout/all) that ended a session or cookie.")
	m.sessionsCreated = counter("latchkey_sessions_created_total", "Sessions started by a sign-in (database rows or JWT cookies).")
	m.emailsSent = counter("latchkey_emails_sent_total", "E-mails (sign-in links, account mails and notices) the SMTP server accepted.")
	m.emailsFailed = counter("latchkey_emails_failed_total", "E-mails (sign-in links, account mails and notices) that could not be delivered to the SMTP server.")
	m.webhooks = newWebhooks(m.registry)
	m.dbErrors = counter("latchkey_db_errors_total", "Database statements that failed (not: no row found, a conflict the code handles, a cancelled request).")
	for code := range m.codes {
		m.codes[code] = strconv.Itoa(code)
	}
	return m
}

func orUnknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// Handler serves the exposition format of the registry (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Route is one route's HTTP metrics, resolved once when the route is
// registered: observing a request then looks up only its status code.
type Route struct {
	label    string
	requests *prometheus.CounterVec
	duration prometheus.Observer
	codes    *[600]string
}

// Route returns the metrics of the route labelled pattern (nil when m is nil).
func (m *Metrics) Route(pattern string) *Route {
	if m == nil {
		return nil
	}
	return &Route{label: pattern, requests: m.requests, duration: m.duration.WithLabelValues(pattern), codes: &m.codes}
}

// Observe counts one answered request.
func (r *Route) Observe(status int, took time.Duration) {
	if r == nil {
		return
	}
	code := "other"
	if status >= 0 && status < len(r.codes) {
		code = r.codes[status]
	}
	r.requests.WithLabelValues(r.label, code).Inc()
	r.duration.Observe(took.Seconds())
}

// SignIn counts a sign-in's outcome: OutcomeSuccess or a NextAuth error code.
func (m *Metrics) SignIn(provider, outcome string) {
	if m != nil {
		m.signIns.WithLabelValues(provider, outcome).Inc()
	}
}

// SecondStep counts a posted two-factor code's outcome: OutcomeSuccess or
// the refusal's code.
func (m *Metrics) SecondStep(outcome string) {
	if m != nil {
		m.secondSteps.WithLabelValues(outcome).Inc()
	}
}

// SignOut counts a completed sign-out.
func (m *Metrics) SignOut() {
	if m != nil {
		m.signOuts.Inc()
	}
}

// SessionCreated counts a session started by a sign-in.
func (m *Metrics) SessionCreated() {
	if m != nil {
		m.sessionsCreated.Inc()
	}
}

// EmailSent counts an e-mail (a sign-in link, an account mail or a
// notice) handed to the SMTP server.
func (m *Metrics) EmailSent() {
	if m != nil {
		m.emailsSent.Inc()
	}
}

// EmailFailed counts an e-mail that could not be delivered.
func (m *Metrics) EmailFailed() {
	if m != nil {
		m.emailsFailed.Inc()
	}
}

// RateLimitRefusal counts an e-mail a rate limit refused, by the tier
// that refused it (app/email's tier names: a bounded set). A rise of
// tier="global" is the alert that strangers are spending the budget for
// unknown addresses.
func (m *Metrics) RateLimitRefusal(tier string) {
	if m != nil {
		m.rateLimitRefusals.WithLabelValues(tier).Inc()
	}
}

// DBError counts a failed database statement.
func (m *Metrics) DBError() {
	if m != nil {
		m.dbErrors.Inc()
	}
}
