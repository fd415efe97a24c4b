package app_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// Several latchkey instances on one database share the e-mail rate limits:
// the counters are rows of the database, not of each process. Each test
// boots three apps (app.New, each with its own limits, sessions and HTTP
// server) on one PostgreSQL database, and again on one SQLite file (as a
// host may run an old and a new process side by side during a deploy). They
// deliver through one SMTP catcher, which counts what was actually sent,
// and requests reach all three at once.

const instanceCount = 3

// cluster is instanceCount apps on one database with one SMTP catcher and
// one clock, behind a trusted proxy (the test), so X-Forwarded-For names
// the client.
type cluster struct {
	apps    []*env
	catcher *smtptest.Server
	clock   *testClock
}

func startCluster(t *testing.T, dialect string, rl config.RateLimit) *cluster {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "shared.db")
	if dialect == models.DialectPostgres {
		dsn = pgtest.NewDatabase(t, postgres.URL(t))
	}
	c := &cluster{
		catcher: smtptest.Start(t, smtptest.Options{}),
		clock:   &testClock{now: time.Now().UTC().Truncate(time.Second)},
	}
	for range instanceCount {
		c.apps = append(c.apps, startMail(t, envOpts{
			smtp: &smtptest.Options{}, catcher: c.catcher, clock: c.clock,
			email: func(p *config.Provider) { p.RateLimit = rl },
			config: func(cfg *config.Config) {
				cfg.DatabaseURL = dsn
				cfg.TrustedProxies = []string{"127.0.0.1/32", "::1/128"}
			},
		}))
	}
	return c
}

// forDialects runs test on PostgreSQL and on SQLite.
func forDialects(t *testing.T, test func(t *testing.T, dialect string)) {
	for _, d := range []string{models.DialectPostgres, models.DialectSQLite} {
		t.Run(d, func(t *testing.T) { test(t, d) })
	}
}

// linkRequest is an e-mail sign-in form with its CSRF dance done, ready to
// be posted to its app as the client at ip.
type linkRequest struct {
	app    *env
	client *http.Client
	form   url.Values
	ip     string
}

// prepare makes one request for each "ip addr" pair, round robin over the
// apps, each from a browser of its own.
func (c *cluster) prepare(pairs ...string) []linkRequest {
	out := make([]linkRequest, len(pairs))
	for i, p := range pairs {
		ip, addr, _ := strings.Cut(p, " ")
		e := c.apps[i%len(c.apps)]
		b := e.browser()
		out[i] = linkRequest{app: e, client: b, ip: ip, form: url.Values{"csrfToken": {e.csrf(b)}, "email": {addr}}}
	}
	return out
}

// repeat is n copies of the pair "ip addr".
func repeat(n int, ip, addr string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ip + " " + addr
	}
	return out
}

// send posts every request at the same moment and returns how many links
// were sent; every other answer must be the EmailSignin error.
func (c *cluster) send(t *testing.T, reqs []linkRequest) int {
	t.Helper()
	locations := make([]string, len(reqs))
	errs := make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, r.app.url("/signin/email"), strings.NewReader(r.form.Encode()))
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", r.ip)
			<-start
			res, err := r.client.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			_ = res.Body.Close()
			locations[i] = res.Header.Get("Location")
		})
	}
	close(start)
	wg.Wait()
	sent := 0
	for i, r := range reqs {
		require.NoError(t, errs[i])
		switch locations[i] {
		case r.app.base + "/verify-request?provider=email&type=email":
			sent++
		case r.app.base + "/error?error=EmailSignin":
		default:
			t.Fatalf("request %d: unexpected answer %q", i, locations[i])
		}
	}
	return sent
}

// mailsTo counts the messages delivered to addr. Every request has
// returned by then, and the app answers only after delivery.
func (c *cluster) mailsTo(addr string) int {
	n := 0
	for _, m := range c.catcher.Mails() {
		if len(m.To) == 1 && m.To[0] == addr {
			n++
		}
	}
	return n
}

// logs is every app's log, and how many apps logged substr.
func (c *cluster) logs(substr string) (all string, apps int) {
	for _, e := range c.apps {
		l := e.logs.String()
		all += l
		if strings.Contains(l, substr) {
			apps++
		}
	}
	return all, apps
}

// Three instances, one address, one client, 30 requests at once: the
// address is sent its per_address budget, not three times it. The 27
// refused requests spent nothing: the client still has the rest of its
// per_ip allowance. Many clients through all instances together stop at
// the address's ceiling. A window later (and after the purge) it starts
// again.
func TestInstancesSharePerAddressLimits(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		c := startCluster(t, dialect, config.RateLimit{PerAddress: 3, PerAddressCeiling: 6, PerIP: 5})
		const client, alice, bob = "192.0.2.10", "alice@example.com", "bob@example.com"

		require.Equal(t, 3, c.send(t, c.prepare(repeat(30, client, alice)...)), "per_address across %d instances", instanceCount)
		require.Equal(t, 3, c.mailsTo(alice), "delivered")
		_, apps := c.logs("per-address limit reached from " + client)
		require.Positive(t, apps)

		// Refusals spent none of the client's per_ip allowance (5 - 3 = 2 left).
		require.Equal(t, 2, c.send(t, c.prepare(client+" c@example.com", client+" d@example.com", client+" e@example.com")))
		_, apps = c.logs("per-IP limit reached for " + client)
		require.Equal(t, 1, apps, "the third was refused per IP, by one instance")

		// 12 clients, 2 requests each, through the three instances: the
		// ceiling (all clients together) holds.
		var pairs []string
		for i := range 12 {
			pairs = append(pairs, repeat(2, fmt.Sprintf("198.51.100.%d", i+1), bob)...)
		}
		require.Equal(t, 6, c.send(t, c.prepare(pairs...)), "per_address_ceiling across instances")
		require.Equal(t, 6, c.mailsTo(bob))
		require.Len(t, c.catcher.Mails(), 3+2+6)

		all, _ := c.logs("")
		for _, line := range strings.Split(all, "\n") {
			if strings.Contains(line, "rate limited") {
				require.NotContains(t, line, "@example.com", "the reasons never hold the address")
			}
		}
		rows, err := c.apps[0].app.Store().RateLimits(t.Context())
		require.NoError(t, err)
		for _, r := range rows {
			require.NotContains(t, r.Bucket, "example.com")
			require.NotContains(t, r.Bucket, "192.0.2")
		}

		// A window later every bucket is full: the purge (which any
		// instance may run) empties the table, and the budget is back.
		c.clock.Add(time.Hour)
		for _, e := range c.apps {
			_, err := e.app.Store().PurgeExpired(t.Context(), c.clock.Now())
			require.NoError(t, err)
		}
		require.Zero(t, c.apps[1].counts().RateLimits)
		require.Equal(t, 3, c.send(t, c.prepare(repeat(12, client, alice)...)))
		require.Equal(t, 6, c.mailsTo(alice))
	})
}

// The provider's global budget is one budget for all instances; each
// instance that meets it empty says so once per window.
func TestInstancesShareGlobalBudget(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		c := startCluster(t, dialect, config.RateLimit{Global: 4, Window: config.Duration(10 * time.Minute)})
		const warning = "sign-in e-mail budget exhausted"
		batch := func(from int) []linkRequest {
			var pairs []string
			for i := from; i < from+12; i++ {
				pairs = append(pairs, fmt.Sprintf("203.0.113.%d u%d@example.com", i, i))
			}
			return c.prepare(pairs...)
		}
		require.Equal(t, 4, c.send(t, batch(1)))
		require.Len(t, c.catcher.Mails(), 4)
		require.Equal(t, 0, c.send(t, batch(20)), "still spent")
		require.Equal(t, 0, c.send(t, batch(40)))
		for _, e := range c.apps {
			require.LessOrEqual(t, strings.Count(e.logs.String(), warning), 1, "one warning per window per instance")
		}
		_, apps := c.logs(warning)
		require.Equal(t, instanceCount, apps, "every instance met the empty budget (32 refusals over 3)")

		c.clock.Add(10 * time.Minute)
		require.Equal(t, 4, c.send(t, batch(60)), "a window later, a full budget for all together")
		require.Len(t, c.catcher.Mails(), 8)
	})
}
