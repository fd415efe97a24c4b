package multi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Signed webhooks (issue #34), judged at a real receiver that verifies
// every request with the Standard Webhooks reference library: delivery
// through a minute of failures, a kill -9 under 200 sign-ins, and two
// instances sharing one outbox on PostgreSQL.
//
// The three mostly wait (on a retry schedule, a lease, a receiver), so
// they run at the same time: each is a subtest started from its own
// goroutine, which go test allows and which, unlike t.Parallel, is not
// held back to GOMAXPROCS tests at once (two on this project's machines).
// Run one with -run 'TestWebhooks/Kill9'.
func TestWebhooks(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"ThroughAMinuteOf500s", testWebhooksThroughAMinuteOf500s},
		{"Kill9DuringSignIns", testWebhooksKill9DuringSignIns},
		{"TwoInstancesThousandEvents", testWebhooksTwoInstancesThousandEvents},
	}
	var wg sync.WaitGroup
	for _, tc := range tests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(tc.name, tc.fn)
		}()
	}
	wg.Wait()
}

// The receiver answers 500 to everything for a full minute from the
// first attempt, then 200. Events made before and during that minute
// (two sign-ins, a sign-out, and a sign-in half-way through) all arrive,
// each with one id on every attempt and the same signed body; the
// attempts of an event are spaced at least by the schedule's delays less
// the jitter; after the minute every event is delivered within the
// schedule's longest delay (and a margin); the outbox then holds nothing
// pending.
func testWebhooksThroughAMinuteOf500s(t *testing.T) {
	const outage = time.Minute
	secret := newHookSecret(t)
	var (
		mu   sync.Mutex
		from time.Time // the first attempt: the minute starts there
	)
	outageFrom := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return from
	}
	rc := newReceiver(t, func(a *attempt, _ int) (int, time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if from.IsZero() {
			from = a.arrived
		}
		if a.arrived.Before(from.Add(outage)) {
			return http.StatusInternalServerError, 0
		}
		return http.StatusOK, 0
	}, secret)
	c := startCluster(t, clusterOpts{instances: 1, extraConfig: hooksConfig(rc.url()), env: []string{hookSecretEnv + "=" + secret}})
	a := c.nodes[0]

	ann, bob, cat := c.browser(), c.browser(), c.browser()
	c.signInByEmail(ann, a, "ann@example.com")
	rc.waitFor(10*time.Second, "a first attempt, soon after a sign-in", func() bool { return !outageFrom().IsZero() })
	c.signInByEmail(bob, a, "bob@example.com")
	require.Equal(t, http.StatusFound, ann.signOut(a).StatusCode)
	// Half-way through the minute, one more.
	time.Sleep(time.Until(outageFrom().Add(outage / 2)))
	c.signInByEmail(cat, a, "cat@example.com")
	flip := outageFrom().Add(outage)

	users := c.usersByID()
	require.Len(t, users, 3)
	sessions := c.sessionRowsByUser() // bob's and cat's; ann's row went with her sign-out
	require.Len(t, sessions, 2)
	rc.waitFor(outage+45*time.Second, "3 user.created, 3 session.created, 1 session.ended delivered", func() bool {
		return len(rc.ofType("user.created")) == 3 && len(rc.ofType("session.created")) == 3 && len(rc.ofType("session.ended")) == 1
	})
	rc.waitFor(10*time.Second, "nothing pending in the outbox", func() bool { return c.outboxByStatus()["pending"] == "" })

	rc.checkAll(secret)
	attempts := rc.snapshot()
	delivered := rc.delivered()
	byID := map[string][]*attempt{}
	for _, at := range attempts {
		byID[at.id] = append(byID[at.id], at)
	}
	require.Len(t, byID, 7, "exactly the seven events were sent")
	require.Len(t, delivered, 7, "every event was delivered")
	require.Equal(t, map[string]string{"delivered": "7"}, c.outboxByStatus())

	for id, list := range byID {
		var failed int
		for i, at := range list {
			if at.arrived.Before(flip) { // answered 500
				failed++
			}
			if i > 0 {
				// attempt i follows failure i: schedule[i-1] less 20 % jitter
				// (and a little for the clocks), never sooner.
				gap := at.arrived.Sub(list[i-1].finished)
				want := time.Duration(float64(scheduleDelay(i-1)) * 0.8)
				require.GreaterOrEqual(t, gap, want-50*time.Millisecond, "%s: attempt %d came %s after the previous failure", id, i+1, gap)
			}
		}
		require.GreaterOrEqual(t, failed, 3, "%s (%s) was tried again and again during the minute", id, list[0].event.Type)
		d := delivered[id]
		require.Less(t, d.arrived.Sub(flip), 25*time.Second, "%s: delivered %s after the receiver came back (the schedule's longest delay is 10 s + 20 %%)", id, d.arrived.Sub(flip))
		require.Equal(t, 1, countStatus(list, http.StatusOK), "%s: one 200, then no more attempts", id)
		// Every failed attempt has its log line (naming the event), the
		// body none.
		require.GreaterOrEqual(t, strings.Count(a.logs.String(), id), failed, "the %d failed attempts of %s are logged", failed, id)
		require.NotContains(t, a.logs.String(), string(d.body))
	}

	// What arrived is what happened.
	emails := map[string]string{} // e-mail → user id
	for _, ev := range rc.ofType("user.created") {
		u, _ := ev.Data["user"].(map[string]any)
		id, _ := u["id"].(string)
		require.Contains(t, users, id, "user.created for a user in the database")
		require.Equal(t, users[id], u["email"])
		require.Equal(t, "email", ev.str("provider"))
		emails[users[id]] = id
	}
	require.Len(t, emails, 3)
	started := map[string]string{} // user id → session id
	for _, ev := range rc.ofType("session.created") {
		require.Equal(t, "database", ev.str("strategy"))
		require.Equal(t, "email", ev.str("provider"))
		started[ev.str("user_id")] = ev.str("session_id")
	}
	require.Len(t, started, 3, "one session.created per user")
	for sid, uid := range sessions {
		require.Equal(t, sid, started[uid], "session.created names the session's row")
	}
	for _, ev := range rc.ofType("session.ended") {
		require.Equal(t, emails["ann@example.com"], ev.str("user_id"))
		require.Equal(t, started[emails["ann@example.com"]], ev.str("session_id"))
		require.Equal(t, "one", ev.str("scope"))
		require.Equal(t, "signout", ev.str("reason"))
	}
	c.requireNoSecretLogged(secret)
	t.Logf("%d attempts for 7 events; the receiver came back at %s", len(attempts), flip.Format("15:04:05.000"))
}

// scheduleDelay is hookSchedule's i-th delay.
func scheduleDelay(i int) time.Duration {
	fields := strings.Split(strings.Trim(hookSchedule, "[]"), ",")
	d, err := time.ParseDuration(strings.TrimSpace(fields[min(i, len(fields)-1)]))
	if err != nil {
		panic(err)
	}
	return d
}

// firstFew is the first ten of lines, sorted, one a line.
func firstFew(lines []string) string {
	sorted := slices.Sorted(slices.Values(lines))
	return strings.Join(sorted[:min(10, len(sorted))], "\n")
}

func countStatus(list []*attempt, status int) int {
	n := 0
	for _, a := range list {
		if a.status == status {
			n++
		}
	}
	return n
}

// 200 browsers open their e-mail links at the same moment; once 25 of
// them are signed in, the instance is killed with SIGKILL, and a new one
// starts on the same database. Whatever committed is what the receiver
// hears about: every session row has exactly one session.created (by
// session_id, with the row's user), every user row exactly one
// user.created, and no event names a session or user that is not there.
// The receiver holds each request 20 ms, so the kill also catches
// deliveries in flight: their events wait for the lease to run out and
// are delivered by the new process.
func testWebhooksKill9DuringSignIns(t *testing.T) {
	const n = 200
	secret := newHookSecret(t)
	rc := newReceiver(t, func(*attempt, int) (int, time.Duration) { return http.StatusOK, 20 * time.Millisecond }, secret)
	c := startCluster(t, clusterOpts{instances: 1, extraConfig: hooksConfig(rc.url()), env: []string{hookSecretEnv + "=" + secret}})
	a := c.nodes[0]

	browsers := make([]*browser, n)
	addrs := make([]string, n)
	for i := range n {
		browsers[i] = c.browser()
		addrs[i] = fmt.Sprintf("kill%03d@example.com", i)
	}
	for i, err := range inParallel(n, 8, func(i int) error { return c.askLink(browsers[i], a, addrs[i]) }) {
		require.NoError(t, err, addrs[i])
	}
	mb := newMailbox(c.smtp)
	links := make([]string, n)
	for i, addr := range addrs {
		link := mb.wait(addr, patience)
		require.NotEmpty(t, link, "no e-mail to %s", addr)
		links[i] = c.at(a, link)
	}

	var (
		start    sync.WaitGroup
		clicks   sync.WaitGroup
		signedIn atomic.Int32
		answered atomic.Int32
		results  = make([]error, n)
	)
	start.Add(1)
	for i := range n {
		clicks.Add(1)
		go func() {
			defer clicks.Done()
			start.Wait()
			results[i] = c.openLink(browsers[i], links[i])
			if results[i] == nil {
				signedIn.Add(1)
			}
			answered.Add(1)
		}()
	}
	start.Done()
	deadline := time.Now().Add(patience)
	for signedIn.Load() < 25 && answered.Load() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, a.cmd.Process.Kill())
	<-a.done
	before := signedIn.Load()
	clicks.Wait()
	t.Logf("killed after %d sign-ins answered", before)

	again := c.startWith("A2", c.dbURL)
	sessions := c.sessionRowsByUser()
	users := c.usersByID()
	require.Greater(t, len(sessions), 0)
	require.Less(t, len(sessions), n, "the kill came while sign-ins were in flight")
	// A click answered as signed in has committed.
	for i, err := range results {
		if err == nil {
			var found bool
			for _, uid := range sessions {
				found = found || users[uid] == addrs[i]
			}
			require.True(t, found, "%s was signed in, and has no session row", addrs[i])
		}
	}
	// The lease of a delivery the kill cut short is the time-out and 30 s.
	rc.waitForNone(patience+30*time.Second, "a session.created for every session row and a user.created for every user", func() []string {
		got := map[string]bool{}
		for _, ev := range rc.ofType("session.created") {
			got[ev.str("session_id")] = true
		}
		for _, ev := range rc.ofType("user.created") {
			u, _ := ev.Data["user"].(map[string]any)
			id, _ := u["id"].(string)
			got[id] = true
		}
		var missing []string
		for id, uid := range sessions {
			if !got[id] {
				missing = append(missing, fmt.Sprintf("session.created of session %s (user %s)", id, users[uid]))
			}
		}
		for id, addr := range users {
			if !got[id] {
				missing = append(missing, fmt.Sprintf("user.created of user %s (%s)", id, addr))
			}
		}
		return missing
	})
	rc.waitFor(patience, "nothing pending in the outbox", func() bool { return c.outboxByStatus()["pending"] == "" })

	rc.checkAll(secret)
	perSession := map[string][]string{} // session id → event ids
	for id, ev := range rc.ofType("session.created") {
		sid := ev.str("session_id")
		require.Contains(t, sessions, sid, "session.created %s names a session that did not commit", id)
		require.Equal(t, sessions[sid], ev.str("user_id"), "session.created %s", id)
		perSession[sid] = append(perSession[sid], id)
	}
	for sid, ids := range perSession {
		require.Len(t, ids, 1, "session %s: one event, not %v", sid, ids)
	}
	require.Len(t, perSession, len(sessions))
	perUser := map[string][]string{}
	for id, ev := range rc.ofType("user.created") {
		u, _ := ev.Data["user"].(map[string]any)
		uid, _ := u["id"].(string)
		require.Contains(t, users, uid, "user.created %s names a user that did not commit", id)
		require.Equal(t, users[uid], u["email"])
		perUser[uid] = append(perUser[uid], id)
	}
	for uid, ids := range perUser {
		require.Len(t, ids, 1, "user %s: one event, not %v", uid, ids)
	}
	require.Len(t, perUser, len(users))
	// Nothing was attempted that is not delivered by now, and no body
	// carries a session cookie.
	delivered := rc.delivered()
	var twice int
	seen := map[string]int{}
	for _, at := range rc.snapshot() {
		require.Contains(t, delivered, at.id)
		if at.status == http.StatusOK {
			seen[at.id]++
			if seen[at.id] == 2 {
				twice++
			}
		}
	}
	for _, b := range browsers {
		if ck := b.cookie(sessionCookie); ck != "" {
			for _, at := range rc.snapshot() {
				require.NotContains(t, string(at.body), ck)
			}
		}
	}
	c.requireNoSecretLogged(secret)
	require.True(t, again.running())
	t.Logf("%d of %d sign-ins committed (%d answered before the kill), %d users; %d events delivered, %d of them twice (at least once: the kill cut a delivery short)",
		len(sessions), n, before, len(users), len(delivered), twice)
}
