package app_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics/metricstest"
)

// Issue 9, finding 5: the e-mail rate limits over HTTP, with clients told
// apart by X-Forwarded-For from a trusted proxy (the test itself).

// startLimited is the e-mail setup behind a trusted proxy with rl as the
// provider's rate_limit.
func startLimited(t *testing.T, rl config.RateLimit) *env {
	return startMail(t, envOpts{
		email:  func(p *config.Provider) { p.RateLimit = rl },
		config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32", "::1/128"} },
	})
}

// linkFrom asks for a sign-in link for addr as the client at ip and tells
// whether it was sent.
func (e *env) linkFrom(ip, addr string) bool {
	e.t.Helper()
	c := e.browser()
	res := e.post(c, "/signin/email", url.Values{"csrfToken": {e.csrf(c)}, "email": {addr}}, "X-Forwarded-For", ip)
	if res.location() == e.base+"/verify-request?provider=email&type=email" {
		return true
	}
	e.requireError(res, "EmailSignin")
	return false
}

// A stranger cannot lock the owner out from elsewhere: each of his clients
// has its own small allowance for the address (per_address), and the owner's
// client keeps hers. Only the ceiling (per_address_ceiling, all clients
// together) stops the owner too. That is the trade-off: without a ceiling one
// inbox could be sent per_address e-mails per client per window (a mail bomb
// from a botnet or an IPv6 block); with it, a stranger with ceiling/per_address
// clients can still hold the owner off until the window refills the ceiling.
func TestEmailRateLimitStrangerCannotLockOutOwner(t *testing.T) {
	e := startLimited(t, config.RateLimit{PerAddress: 2, PerIP: 100}) // ceiling: 10 × 2
	const owner, victim = "192.0.2.10", "alice@example.com"
	stranger := func(i int) string { return fmt.Sprintf("198.51.100.%d", i) }

	require.True(t, e.linkFrom(stranger(1), victim))
	require.True(t, e.linkFrom(stranger(1), victim))
	require.False(t, e.linkFrom(stranger(1), victim), "per (address, client)")
	require.True(t, e.linkFrom(owner, victim), "the stranger used up his allowance, not the owner's")

	sent := 3
	for i := 2; i <= 50; i++ {
		if e.linkFrom(stranger(i), victim) {
			sent++
		}
		if i == 10 {
			require.True(t, e.linkFrom(owner, victim), "after %d e-mails to her address, from 10 clients", sent)
			sent++
		}
	}
	require.Equal(t, 20, sent, "50 clients send the address no more than the ceiling")
	require.False(t, e.linkFrom(owner, victim), "the ceiling reached holds the owner off too (the trade-off)")
	require.Contains(t, e.logs.String(), "per-address ceiling reached")

	e.clock.Add(time.Hour / 2) // her own allowance refills one, the ceiling ten
	require.True(t, e.linkFrom(owner, victim))
	requireNoAddressInRateLogs(t, e, victim)
}

// IPv6 clients are counted by /64 (one subscriber), and /64s by their /48
// (one site) in a coarser tier.
func TestEmailRateLimitIPv6Prefixes(t *testing.T) {
	e := startLimited(t, config.RateLimit{PerIP: 2, PerNetwork: 3, PerAddress: 100})
	require.True(t, e.linkFrom("2001:db8:1:1::a", "a@example.com"))
	require.True(t, e.linkFrom("2001:db8:1:1::b", "b@example.com"))
	require.False(t, e.linkFrom("2001:db8:1:1:ffff::c", "c@example.com"), "same /64, same bucket")
	require.Contains(t, e.logs.String(), "per-IP limit reached for 2001:db8:1:1::/64")

	require.True(t, e.linkFrom("2001:db8:1:2::1", "d@example.com"), "another /64 of the /48")
	require.False(t, e.linkFrom("2001:db8:1:3::1", "e@example.com"), "the /48's allowance is spent")
	require.Contains(t, e.logs.String(), "per-network limit reached for 2001:db8:1::/48")
	require.True(t, e.linkFrom("2001:db8:2:1::1", "f@example.com"), "another /48")
	require.True(t, e.linkFrom("192.0.2.1", "g@example.com"), "IPv4 counts in a /24 tier of its own")
	require.Len(t, e.smtp.Mails(), 5)
}

// The provider's global budget holds across every client and address, and
// its exhaustion is logged once per window, not per refused request.
func TestEmailRateLimitGlobalBudget(t *testing.T) {
	e := startLimited(t, config.RateLimit{Global: 4, Window: config.Duration(10 * time.Minute)})
	const warning = "sign-in e-mail budget exhausted"
	sent := 0
	for i := range 12 {
		if e.linkFrom(fmt.Sprintf("203.0.113.%d", i+1), fmt.Sprintf("u%d@example.com", i)) {
			sent++
		}
	}
	require.Equal(t, 4, sent)
	require.Len(t, e.smtp.Mails(), 4)
	require.Equal(t, 1, strings.Count(e.logs.String(), warning), e.logs.String())

	e.clock.Add(10 * time.Minute) // a window later: a full budget, and a new warning when spent
	for i := range 6 {
		e.linkFrom(fmt.Sprintf("203.0.113.%d", 100+i), fmt.Sprintf("v%d@example.com", i))
	}
	require.Len(t, e.smtp.Mails(), 8)
	require.Equal(t, 2, strings.Count(e.logs.String(), warning))
}

// requireNoAddressInRateLogs checks that no rate-limit log line names addr:
// the reasons are logged, the address is personal data.
func requireNoAddressInRateLogs(t *testing.T, e *env, addr string) {
	t.Helper()
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, "rate limited") {
			require.NotContains(t, line, addr)
		}
	}
}

// Issue 26, M4: the global budget is no kill switch. Strangers on 50
// clients spend it with sign-in requests for unknown addresses, and from
// then on mail to addresses without a verified account is refused (an
// unverified user's reset too), logged once and counted by tier; but an
// existing user's verified address still gets its sign-in link and its
// password reset: account recovery cannot be spent by strangers.
func TestEmailGlobalBudgetSparesExistingUsers(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startPasswords(t, envOpts{postgres: pg,
			email: func(p *config.Provider) { p.RateLimit = config.RateLimit{Global: 10} },
			config: func(c *config.Config) {
				c.TrustedProxies = []string{"127.0.0.1/32", "::1/128"}
				c.Metrics.Listen = "127.0.0.1:0"
			}})
		const owner, unverified = "owner@example.com", "unverified@example.com"
		e.addPasswordUser(owner, "correct horse battery", true)
		e.addPasswordUser(unverified, "correct horse battery", false)

		sent := 0
		for i := range 50 { // 50 clients, each of its own /24
			if e.linkFrom(fmt.Sprintf("198.18.%d.1", i), fmt.Sprintf("stranger%d@example.com", i)) {
				sent++
			}
		}
		require.Equal(t, 10, sent, "the budget for unknown addresses is spent")
		require.Len(t, e.smtp.Mails(), 10)
		require.False(t, e.linkFrom("203.0.113.1", "newcomer@example.com"), "unknown addresses wait for the refill")
		reset := func(ip, addr string) resp {
			c := e.browser()
			return e.post(c, "/reset", url.Values{"csrfToken": {e.csrf(c)}, "email": {addr}}, "X-Forwarded-For", ip)
		}
		require.Equal(t, http.StatusTooManyRequests, reset("203.0.113.2", "nobody@example.com").StatusCode)
		require.Equal(t, http.StatusTooManyRequests, reset("203.0.113.3", unverified).StatusCode,
			"an unverified address is no proven owner's")

		require.True(t, e.linkFrom("203.0.113.4", owner), "the owner's sign-in link goes out")
		m, _ := e.mail(11)
		require.Equal(t, []string{owner}, m.To)
		res := reset("203.0.113.5", owner)
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		link, _ := e.flowLink(12, "/reset/confirm")
		m, _ = e.mail(12)
		require.Equal(t, []string{owner}, m.To)
		res = e.get(e.browser(), link)
		require.Equal(t, http.StatusOK, res.StatusCode, "the reset link works")

		require.Equal(t, 1, strings.Count(e.logs.String(), "sign-in e-mail budget exhausted"), "one warning per window")
		rec := httptest.NewRecorder()
		e.app.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		s := metricstest.Parse(t, bytes.NewReader(rec.Body.Bytes()))
		require.Equal(t, 43.0, s.Value("latchkey_ratelimit_refusals_total", "tier", "global"), "40 + 1 links, 2 resets")
	})
}

// Issue 26, M4: IPv4 clients of one /24 share a network tier (5 × per_ip
// by default), as IPv6 /64s share their /48: an attacker with a /24 does
// not get 256 clients' allowances.
func TestEmailRateLimitIPv4Network(t *testing.T) {
	e := startLimited(t, config.RateLimit{PerIP: 2})
	for i := range 10 {
		require.True(t, e.linkFrom(fmt.Sprintf("192.0.2.%d", i+1), fmt.Sprintf("u%d@example.com", i)), "request %d", i)
	}
	require.False(t, e.linkFrom("192.0.2.200", "v@example.com"), "the /24's allowance (5 × 2) is spent")
	require.Contains(t, e.logs.String(), "per-network limit reached for 192.0.2.0/24")
	require.True(t, e.linkFrom("192.0.3.1", "w@example.com"), "another /24")

	e = startLimited(t, config.RateLimit{PerIP: 2, PerIPv4Network: 3})
	for i := range 3 {
		require.True(t, e.linkFrom(fmt.Sprintf("198.51.100.%d", i+1), fmt.Sprintf("u%d@example.com", i)))
	}
	require.False(t, e.linkFrom("198.51.100.99", "v@example.com"), "per_ipv4_network: 3")
}

// The rate-limit counters live in the database. When they cannot be
// reached (their table gone: an outage that spares the user lookup) no
// link is sent, and the answer is the outage's: 503 with Retry-After and
// TryLater, never a pass, never "e-mail refused", never a 500.
func TestEmailRateLimitCountersDown(t *testing.T) {
	e := startLimited(t, config.RateLimit{})
	require.NoError(t, e.app.Store().DB().Exec("DROP TABLE rate_limits").Error)
	c := e.browser()
	res := e.post(c, "/signin/email", url.Values{"csrfToken": {e.csrf(c)}, "email": {"al@example.com"}, "json": {"true"}})
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, res.body)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.Contains(t, res.body, `"error":"TryLater"`)
	res = e.post(c, "/signin/email", url.Values{"csrfToken": {e.csrf(c)}, "email": {"al@example.com"}})
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "the page's try again")
	require.Empty(t, e.smtp.Mails(), "nothing sent unchecked")
}
