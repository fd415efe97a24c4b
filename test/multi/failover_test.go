package multi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models/pghatest"
)

// EnvFailoverReport names a file for the fail-over test's report (a short
// markdown table); the bench:failover task sets it.
const EnvFailoverReport = "LATCHKEY_FAILOVER_REPORT"

// Two latchkey instances on a real pg_auto_failover formation (a monitor,
// a primary and a synchronous standby; models/pghatest), through the
// round-robin proxy, under a checked load: browsers reading their
// database session, fresh browsers signing in by e-mail (form, mail,
// link) and every other one signing out. In order:
//
//  1. kill -9 of the primary's host (its keeper and its Postgres);
//  2. the old primary back as a standby (pg_rewind), the formation whole;
//  3. a planned switchover, which also puts the first node back as the
//     primary.
//
// Every answer is recorded with its time and must be a documented one: the
// normal answer, or a 503 with Retry-After — never {} for a signed-in
// browser, never another 5xx, never a hang past 20 s. Afterwards nothing
// committed is lost: every sign-in answered as successful still has its
// session (unless that browser signed out), every sign-out's session is
// gone, no link signs in twice; a link whose click got a 503 either signs
// in now or says Verification (counted apart: an unknown-outcome commit).
// The instances keep running, with no panic. The times until sign-ins
// succeed again are measured and reported (t.Logf, and the markdown file
// named by LATCHKEY_FAILOVER_REPORT), not asserted.
func TestFailover(t *testing.T) {
	began := time.Now()
	ha := pghatest.Start(t, pghatest.Options{Password: dbPassword})
	t.Logf("pg_auto_failover formation healthy after %s", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	c := newCluster(t, ha.URL())
	c.nodes = c.launchAll(2)
	for _, in := range c.nodes {
		in.waitReady(t)
	}
	first := ha.Nodes()[0]
	primary, err := ha.Primary(ctx)
	require.NoError(t, err)
	require.Equal(t, first, primary, "node1 starts as the primary")

	// The readers: browsers signed in before the load starts.
	readers := map[string]*browser{}
	for _, addr := range []string{"r0@example.com", "r1@example.com", "r2@example.com", "r3@example.com"} {
		b := c.loadBrowser()
		c.signInByEmail(b, c.nodes[len(readers)%2], addr)
		readers[addr] = b
	}

	rec := &record{}
	stop := make(chan struct{})
	load := c.runLoad(rec, newMailbox(c.smtp), readers, 3, stop)
	stopLoad := func() {
		select {
		case <-stop:
		default:
			close(stop)
			load.Wait()
		}
	}
	defer stopLoad()
	time.Sleep(3 * time.Second) // the load's baseline, before any fail-over

	// 1. The primary's host dies.
	// The window starts once every process of the node is dead: until
	// then (the tree is stopped, then killed, in a few ms) a commit could
	// still go through on it.
	kill := &event{name: "kill -9 of the primary", from: first.Name}
	killing := time.Now()
	require.NoError(t, ha.Kill(first))
	kill.start = time.Now()
	t.Logf("kill -9 of %s took %s", first, kill.start.Sub(killing).Round(time.Millisecond))
	second, err := ha.WaitPrimary(ctx)
	require.NoError(t, err)
	require.NotEqual(t, first, second)
	kill.to, kill.primaryAt = second.Name, time.Now()
	c.observe(t, rec, kill)

	// 2. It comes back, as a standby.
	rejoin := &event{name: "old primary rejoins as standby", from: second.Name, to: second.Name, start: time.Now()}
	require.NoError(t, ha.Rejoin(first))
	require.NoError(t, ha.WaitHealthy(ctx))
	rejoin.primaryAt = time.Now()
	c.observe(t, rec, rejoin)

	// 3. A planned switchover, back to the first node.
	switchover := &event{name: "planned switchover", from: second.Name, start: time.Now()}
	require.NoError(t, ha.Switchover(ctx))
	back, err := ha.WaitPrimary(ctx)
	require.NoError(t, err)
	switchover.to, switchover.primaryAt = back.Name, time.Now()
	if back != first { // not with two nodes; but then once more
		require.NoError(t, ha.Switchover(ctx))
		back, err = ha.WaitPrimary(ctx)
		require.NoError(t, err)
		switchover.to, switchover.primaryAt = back.Name, time.Now()
	}
	c.observe(t, rec, switchover)
	require.Equal(t, first, back, "the first node is the primary again")
	require.NoError(t, ha.WaitHealthy(ctx))
	stopLoad()

	events := []*event{kill, rejoin, switchover}
	answers := rec.snapshot()
	// A sign-out on one instance ends the session on the other within
	// session.cache_ttl (docs/compatibility.md): the last ones of the load
	// are checked once that has passed, or the other instance's copy
	// would read as a lost sign-out.
	time.Sleep(cacheTTL + cacheSlack)
	after := c.checkAfterwards(t, rec.allFlows())
	for addr, b := range readers {
		if got := c.sessionOf(t, b); got != addr {
			after.lost = append(after.lost, lostWrite{at: began, what: fmt.Sprintf("%s: signed in before the load, GET /session now answers %q", addr, got)})
		}
	}
	rep := summarize(answers, events, after)
	c.checkAnswers(t, answers)
	if kinds, _ := c.kinds(answers, class503); kinds != "" {
		t.Logf("the 503 answers (with Retry-After):\n%s", kinds)
	}
	for _, in := range c.nodes {
		require.True(t, in.running(), "instance %s still runs", in.name)
		require.NotContains(t, in.logs.String(), "panic", "instance %s", in.name)
	}
	if monitor, err := ha.Events(ctx, 60); err == nil {
		t.Logf("pg_auto_failover's events:\n%s", strings.Join(monitor, "\n"))
	}
	rep.wall = time.Since(began)
	text := rep.markdown()
	t.Logf("fail-over report:\n%s", text)
	if p := os.Getenv(EnvFailoverReport); p != "" {
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	require.Zero(t, rep.lostTotal(), "committed writes lost")
}

// event is one fail-over (or a rejoin) and the window it is judged in.
type event struct {
	name      string
	from, to  string // the primary before and after
	start     time.Time
	primaryAt time.Time // a writable primary again, by the monitor's word
	end       time.Time // the end of its window of answers
}

// observe keeps the load going until a sign-in sent after the event's
// start has succeeded (or a minute went by) and 3 s more, then closes the
// event's window.
func (c *cluster) observe(t *testing.T, r *record, ev *event) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !r.signedInSince(ev.start) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	ev.end = time.Now()
}

// checkAnswers fails the test for every answer that is not a documented
// one: each kind of them with its count and times, then the first few.
func (c *cluster) checkAnswers(t *testing.T, answers []answer) {
	t.Helper()
	if kinds, samples := c.kinds(answers, classBad); len(kinds) > 0 {
		t.Errorf("%d answers out of %d were not documented ones (the normal answer, or 503 with Retry-After):\n%sthe first:\n%s",
			countClass(answers, classBad), len(answers), kinds, strings.Join(samples, "\n"))
	}
}

// kinds groups the answers of a class by route, answer and browser (a
// reader signed in before the load, or a fresh one of the sign-ins), each
// kind with its count and times; and gives the first ten answers.
func (c *cluster) kinds(answers []answer, class string) (string, []string) {
	type kind struct {
		n           int
		first, last time.Time
	}
	kinds := map[string]*kind{}
	var order, samples []string
	for _, a := range answers {
		if a.class != class {
			continue
		}
		who := "a fresh browser"
		if strings.HasPrefix(a.who, "r") {
			who = "a reader"
		}
		key := fmt.Sprintf("%s by %s: %d %s %s [%s]", a.op, who, a.status, strings.TrimPrefix(a.location, c.origin()), a.err, a.why)
		if a.op == opSession && a.why != "" {
			key = fmt.Sprintf("%s by %s: %d [%s] %s", a.op, who, a.status, a.why, a.body)
		}
		k := kinds[key]
		if k == nil {
			k = &kind{first: a.sent}
			kinds[key] = k
			order = append(order, key)
		}
		k.n++
		k.last = a.sent
		if len(samples) < 10 {
			samples = append(samples, a.String())
		}
	}
	var b strings.Builder
	for _, key := range order {
		k := kinds[key]
		fmt.Fprintf(&b, "%5d × %s (%s – %s)\n", k.n, key, k.first.Format("15:04:05.000"), k.last.Format("15:04:05.000"))
	}
	return b.String(), samples
}

// afterwards is what the checks after the load found, per flow.
type afterwards struct {
	lost     []lostWrite // committed writes that did not survive
	retried  []*flow     // links whose click got a 503 and sign in now
	consumed []*flow     // links whose click got a 503, now spent, the browser not signed in
	orphans  int         // of consumed: a session row exists that no browser got
	unknown  int         // sign-outs answered 503 (their outcome is not asserted)
}

// lostWrite is a write latchkey answered as done that is not there.
type lostWrite struct {
	at   time.Time // when it was answered
	what string
}

// checkAfterwards checks, once the formation is whole and writable, that
// every write latchkey answered as done is still there, and what the
// clicks answered with a 503 did.
func (c *cluster) checkAfterwards(t *testing.T, flows []*flow) afterwards {
	t.Helper()
	var out afterwards
	lose := func(a answer, format string, args ...any) {
		out.lost = append(out.lost, lostWrite{at: a.sent, what: a.who + ": " + fmt.Sprintf(format, args...)})
	}
	for _, f := range flows {
		switch f.clicked.class {
		case classOK:
			signedOut := f.signOut != nil && f.signOut.class == classOK
			rows := c.sessionRows(t, f.cookie)
			switch {
			case signedOut:
				if rows != 0 {
					lose(*f.signOut, "signed out, but its session row is still there")
				}
				if got := c.sessionOf(t, cookieBrowser(c, f.cookie)); got != "" {
					lose(*f.signOut, "signed out, but its old cookie is still signed in as %q", got)
				}
			case f.signOut != nil && f.signOut.class == class503:
				out.unknown++
			default:
				if rows != 1 {
					lose(f.clicked, "signed in, but its session row is gone")
				}
				if got := c.sessionOf(t, f.br); got != f.addr {
					lose(f.clicked, "signed in, but GET /session now answers %q", got)
				}
			}
			// The link is spent: a second click is refused.
			if r := c.clickAgain(t, f); r.StatusCode != http.StatusFound || !strings.Contains(r.location(), "error=Verification") {
				lose(f.clicked, "the link signed in once, and a second click answered %d → %s", r.StatusCode, r.location())
			}
		case class503:
			r := c.clickAgain(t, f)
			switch {
			case r.StatusCode == http.StatusFound && r.location() == c.origin()+"/home":
				out.retried = append(out.retried, f)
			case r.StatusCode == http.StatusFound && strings.Contains(r.location(), "error=Verification"):
				out.consumed = append(out.consumed, f)
				if c.count("sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1", f.addr) > 0 {
					out.orphans++
				}
			default:
				t.Errorf("%s: the link's click got a 503; clicked again now it answers %d → %s %s", f.addr, r.StatusCode, r.location(), r.body)
			}
		}
	}
	return out
}

// sessionRows counts the sessions table's rows for a session cookie.
func (c *cluster) sessionRows(t *testing.T, cookie string) int {
	t.Helper()
	return c.count("sessions WHERE token_hash = $1", session.HashToken(cookie))
}

// sessionOf is the user GET /session answers for b, through the proxy,
// once the service answers (a 503 is waited out).
func (c *cluster) sessionOf(t *testing.T, b *browser) string {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		r := b.get(c.publicURL("/session"))
		if r.StatusCode == http.StatusServiceUnavailable && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		require.Equal(t, http.StatusOK, r.StatusCode, r.body)
		return userEmail(mustJSON(t, r.body))
	}
}

// clickAgain opens f's link once more in its browser, a 503 waited out.
func (c *cluster) clickAgain(t *testing.T, f *flow) resp {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		r := f.br.get(f.link)
		if r.StatusCode == http.StatusServiceUnavailable && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		return r
	}
}

// cookieBrowser is a fresh browser holding a copy of a session cookie.
func cookieBrowser(c *cluster, cookie string) *browser {
	b := c.browser()
	b.client.Jar.SetCookies(mustURL(c.t, c.publicURL("/")), []*http.Cookie{{Name: sessionCookie, Value: cookie, Path: "/"}})
	return b
}
