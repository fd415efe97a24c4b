package multi_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// PostgreSQL down under running instances (an upgrade, a fail-over). While
// it is down nobody is told they are signed out: a session the instance
// read lately answers from its cache (session.outage_grace), one it never
// read answers 503 with Retry-After, its cookie kept; an e-mail sign-in
// gets the "try again" page (503), not the error page or a 500; the
// processes stay up. Once the database is back, everything answers again:
// the pool replaces its dead connections by itself, no restart needed.
func TestDatabaseRestartUnderRunningInstance(t *testing.T) {
	pg := ownServer(t)
	c := startCluster(t, clusterOpts{instances: 2, adminURL: pg.AdminURL})
	a, b := c.nodes[0], c.nodes[1]
	fay := c.browser()
	c.signInByEmail(fay, a, "fay@example.com")
	require.Equal(t, "fay@example.com", fay.email(a))
	fayCookie := fay.cookie(sessionCookie)
	// hal signs in through b: a has never read hal's session.
	hal := c.browser()
	c.signInByEmail(hal, b, "hal@example.com")
	halCookie := hal.cookie(sessionCookie)

	require.NoError(t, pg.Stop())
	for i := range 3 { // the first request meets the dead connections, later ones a refused dial
		require.Equal(t, "fay@example.com", fay.email(a), "request %d: the session a read lately still answers", i)
		r := hal.get(a.url("/session"))
		require.Equal(t, http.StatusServiceUnavailable, r.StatusCode, r.body)
		require.Equal(t, "5", r.Header.Get("Retry-After"))
		require.JSONEq(t, `{"error":"TryLater"}`, r.body)
		for _, sc := range r.Header.Values("Set-Cookie") {
			require.False(t, strings.HasPrefix(sc, sessionCookie+"="), "the session cookie is left alone: %s", sc)
		}
		require.Equal(t, halCookie, hal.cookie(sessionCookie))
	}
	require.Equal(t, fayCookie, fay.cookie(sessionCookie))

	fa := hal.root(a, http.MethodGet, "/authz/forward-auth")
	require.Equal(t, http.StatusServiceUnavailable, fa.StatusCode, "forward-auth does not send a signed-in user to sign in")
	require.Equal(t, "5", fa.Header.Get("Retry-After"))

	gil := c.browser()
	mailed := len(c.smtp.Mails())
	r := gil.post(a.url("/signin/email"), url.Values{"csrfToken": {gil.csrf(a)}, "email": {"gil@example.com"}})
	require.Equal(t, http.StatusServiceUnavailable, r.StatusCode, r.body)
	require.Equal(t, "5", r.Header.Get("Retry-After"))
	require.Contains(t, r.body, "Try again later")
	require.Len(t, c.smtp.Mails(), mailed, "no link went out for a sign-in that was not stored")
	ready := gil.root(a, http.MethodGet, "/health/ready")
	require.Equal(t, http.StatusServiceUnavailable, ready.StatusCode)
	require.True(t, a.running())
	require.True(t, b.running())

	require.NoError(t, pg.Start())
	gil.waitStatus(a, "/health/ready", http.StatusOK)
	require.Equal(t, "hal@example.com", hal.email(a), "answered again, same cookie")
	require.Equal(t, halCookie, hal.cookie(sessionCookie))
	require.Equal(t, "fay@example.com", fay.email(a))

	// And the instance writes again: a new sign-in goes through.
	c.signInByEmail(gil, a, "gil@example.com")
	require.Equal(t, "gil@example.com", gil.email(b))
}

// A quick restart (a fail-over, pg_ctl restart) between two requests, while
// the pool holds several connections used a moment before, each now dead.
// Every GET /session after it answers the session, and a sign-in goes
// through: the first statement to meet a dead connection makes the pool
// ping the others before reusing them, and the session lookup that met it
// is made once more. (The lookup cache is off: every GET /session must
// reach the database for this to test the lookup's retry.)
func TestQuickDatabaseRestart(t *testing.T) {
	pg := ownServer(t)
	c := startCluster(t, clusterOpts{instances: 1, adminURL: pg.AdminURL, extraConfig: "session:\n  cache_ttl: 0s\n"})
	a := c.nodes[0]
	br := c.browser()
	c.signInByEmail(br, a, "ida@example.com")

	for round := range 3 {
		// Several connections, all used just now: GETs at once.
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodGet, a.url("/session"), nil)
				_, _ = br.do(req)
			}()
		}
		wg.Wait()
		require.Equal(t, "ida@example.com", br.email(a), "round %d", round)

		require.NoError(t, pg.Stop())
		require.NoError(t, pg.Start())
		for i := range 8 {
			require.Equal(t, "ida@example.com", br.email(a), "round %d, request %d after the restart", round, i)
		}
	}
	c.signInByEmail(c.browser(), a, "jon@example.com")
}

// ownServer is a PostgreSQL cluster of the test's own: stopping the shared
// one would break the other tests.
func ownServer(t *testing.T) *pgtest.Server {
	t.Helper()
	pg, err := pgtest.StartCluster()
	require.NoError(t, err)
	t.Cleanup(pg.Close)
	return pg
}
