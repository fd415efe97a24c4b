package multi_test

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// Two instances on one PostgreSQL database share the outbox: 500
// browsers sign in by e-mail, every other one on each instance, each a
// new user (a user.created and a session.created: 1,000 events). The
// e-mail sign-in is the cheapest real path to an event: no password hash
// (argon2id, 19 MiB and two passes per sign-in), no process start (an
// admin command). The receiver holds every request 0–19 ms and answers
// the first attempt of one event in ten with 503, so retries are claimed
// while both workers poll. Every event is delivered, exactly once with a
// 2xx, and no two attempts of one event overlap in time at the receiver;
// both instances delivered some (their metrics), which together are the
// receiver's count.
func testWebhooksTwoInstancesThousandEvents(t *testing.T) {
	const n = 500
	secret := newHookSecret(t)
	spread := func(id string) uint32 {
		h := fnv.New32a()
		_, _ = h.Write([]byte(id))
		return h.Sum32()
	}
	rc := newReceiver(t, func(a *attempt, previous int) (int, time.Duration) {
		h := spread(a.id)
		hold := time.Duration(h%20) * time.Millisecond
		if previous == 0 && h%10 == 0 {
			return http.StatusServiceUnavailable, hold
		}
		return http.StatusOK, hold
	}, secret)
	c := newCluster(t, pgtest.NewDatabase(t, adminURL))
	c.extraEnv = []string{hookSecretEnv + "=" + secret}
	c.appendConfig(hooksConfig(rc.url()))
	envA, metricsA := withMetrics(t)
	envB, metricsB := withMetrics(t)
	a := c.startWith("A", c.dbURL, envA)
	b := c.startWith("B", c.dbURL, envB)

	mb := newMailbox(c.smtp)
	began := time.Now()
	errs := inParallel(n, 12, func(i int) error {
		return c.emailSignIn(mb, []*instance{a, b}[i%2], fmt.Sprintf("many%03d@example.com", i))
	})
	for i, err := range errs {
		require.NoError(t, err, "sign-in %d", i)
	}
	t.Logf("%d sign-ins in %s", n, time.Since(began).Round(time.Millisecond))
	rc.waitFor(2*patience, fmt.Sprintf("%d user.created and %d session.created delivered", n, n), func() bool {
		return len(rc.ofType("user.created")) == n && len(rc.ofType("session.created")) == n
	})
	rc.waitFor(patience, "nothing pending in the outbox", func() bool { return c.outboxByStatus()["pending"] == "" })
	t.Logf("all delivered %s after the first sign-in", time.Since(began).Round(time.Millisecond))

	rc.checkAll(secret)
	attempts := rc.snapshot()
	delivered := rc.delivered()
	outbox := c.outboxByStatus()
	require.Equal(t, map[string]string{"delivered": fmt.Sprint(len(delivered))}, outbox, "every outbox row delivered, one per event the receiver got")
	require.GreaterOrEqual(t, len(delivered), 2*n)

	byID := map[string][]*attempt{}
	var oks, retried int
	for _, at := range attempts {
		byID[at.id] = append(byID[at.id], at)
		if at.status == http.StatusOK {
			oks++
		} else {
			retried++
		}
	}
	var overlaps, twice []string
	for id, list := range byID { // in arrival order
		if n := countStatus(list, http.StatusOK); n != 1 {
			twice = append(twice, fmt.Sprintf("%s: %d attempts answered 200", id, n))
		}
		busyUntil := list[0].finished
		for _, at := range list[1:] {
			if at.arrived.Before(busyUntil) {
				overlaps = append(overlaps, fmt.Sprintf("%s: an attempt arrived at %s, while another ran until %s",
					id, at.arrived.Format("15:04:05.000000"), busyUntil.Format("15:04:05.000000")))
			}
			if at.finished.After(busyUntil) {
				busyUntil = at.finished
			}
		}
	}
	require.Zero(t, len(overlaps), "one event handed to two workers at once, %d times; the first:\n%s", len(overlaps), firstFew(overlaps))
	// Nothing failed here (no kill, no time-out): a second 2xx delivery
	// would be a claim that ignored a record or a lease.
	require.Zero(t, len(twice), "%d events delivered more than once; the first:\n%s", len(twice), firstFew(twice))

	users, sessions := c.usersByID(), c.sessionRowsByUser()
	require.Len(t, users, n)
	require.Len(t, sessions, n)
	for _, ev := range rc.ofType("session.created") {
		require.Equal(t, sessions[ev.str("session_id")], ev.str("user_id"))
	}

	var total float64
	for _, in := range []struct {
		name, url string
	}{{a.name, metricsA}, {b.name, metricsB}} {
		got := scrape(t, in.url).Value("latchkey_webhook_deliveries_total", "endpoint", hookEndpoint, "result", "delivered")
		require.Greater(t, got, 0.0, "instance %s delivered some", in.name)
		total += got
		t.Logf("instance %s delivered %v", in.name, got)
	}
	require.Equal(t, float64(oks), total, "the instances' counts are the receiver's")
	c.requireNoSecretLogged(secret)
	t.Logf("%d events, %d attempts (%d answered 503 and retried)", len(delivered), len(attempts), retried)
}
