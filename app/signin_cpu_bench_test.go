package app_test

import (
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// The CPU latchkey itself spends on a whole sign-in, the identity
// provider's and the SMTP server's excluded: every request latchkey
// answers runs on a goroutine locked to its OS thread, and the thread's
// CPU clock (CLOCK_THREAD_CPUTIME_ID) is read before and after. Waiting
// for the IdP or the SMTP server costs the thread nothing, and their own
// work runs on other threads; so does the test's browser. Left out too:
// the HTTP client's background read loop that parses the IdP's answers
// (on a goroutine of its own). Reported per sign-in as latchkey-µs/op,
// and per route.

// cpuMeter adds up the thread CPU time of the requests it wraps, by route.
type cpuMeter struct {
	mu      sync.Mutex
	byRoute map[string]time.Duration
}

func newCPUMeter() *cpuMeter { return &cpuMeter{byRoute: map[string]time.Duration{}} }

func (m *cpuMeter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		start := threadCPU()
		next.ServeHTTP(w, r)
		spent := threadCPU() - start
		route := r.Method + " " + routeOf(r.URL.Path)
		m.mu.Lock()
		m.byRoute[route] += spent
		m.mu.Unlock()
	})
}

// reset forgets what the set-up requests cost.
func (m *cpuMeter) reset() {
	m.mu.Lock()
	clear(m.byRoute)
	m.mu.Unlock()
}

// measure runs signIn once unmeasured (the first creates the user and, for
// OIDC, runs discovery), then once per benchmark iteration, and reports.
func (m *cpuMeter) measure(b *testing.B, signIn func()) {
	signIn()
	m.reset()
	n := 0
	for b.Loop() {
		signIn()
		n++
	}
	m.report(b, n)
}

// report adds latchkey-µs/op (all routes) and one metric per route.
func (m *cpuMeter) report(b *testing.B, ops int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total time.Duration
	for route, d := range m.byRoute {
		total += d
		b.ReportMetric(float64(d.Microseconds())/float64(ops), "µs/op:"+strings.ReplaceAll(route, " ", "_"))
	}
	b.ReportMetric(float64(total.Microseconds())/float64(ops), "latchkey-µs/op")
}

// routeOf names a request path by its action, e.g. /callback/idp.
func routeOf(path string) string {
	_, rest, _ := strings.Cut(path, "/api/auth")
	return rest
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkOAuthSignInCPU: a returning user signs in through the OpenID
// Connect provider (mockoidc: discovery, RS256 id_token, PKCE, nonce),
// SQLite, each session strategy: GET /csrf, POST /signin/idp, the IdP's
// redirects, GET /callback/idp (code exchange, id_token check, account
// lookup, session), then GET /session once.
func BenchmarkOAuthSignInCPU(b *testing.B) {
	for _, strategy := range strategies() {
		b.Run(strategy, func(b *testing.B) {
			m := newCPUMeter()
			e := startEnv(b, envOpts{strategy: strategy, wrap: m.wrap}.oidc(nil, nil))
			signIn := func() {
				c := e.following(e.browser())
				res := e.signIn(c, "idp", "/dashboard")
				if res.StatusCode != http.StatusFound || res.location() != e.origin+"/dashboard" {
					b.Fatalf("sign-in: %d %q", res.StatusCode, res.location())
				}
				if userEmail(e.session(c)) == "" {
					b.Fatal("not signed in")
				}
			}
			m.measure(b, signIn)
		})
	}
}

// BenchmarkEmailSignInCPU: a returning user signs in by e-mail, SQLite,
// each session strategy: GET /csrf, POST /signin/email (rate limits, token
// row, message built and handed to the SMTP server), the link opened (token
// consumed, session), then GET /session once.
func BenchmarkEmailSignInCPU(b *testing.B) {
	for _, strategy := range strategies() {
		b.Run(strategy, func(b *testing.B) {
			m := newCPUMeter()
			e := startEnv(b, envOpts{
				ownURL: true, strategy: strategy, wrap: m.wrap, smtp: &smtptest.Options{},
				email: func(p *config.Provider) { p.RateLimit.Disabled = true },
			})
			signIn := func() {
				c := e.browser()
				link := e.emailLink(c, "ann@example.com", e.origin+"/home")
				res := e.get(c, link)
				if res.StatusCode != http.StatusFound || res.location() != e.origin+"/home" {
					b.Fatalf("link: %d %q", res.StatusCode, res.location())
				}
				if userEmail(e.session(c)) == "" {
					b.Fatal("not signed in")
				}
			}
			m.measure(b, signIn)
		})
	}
}
