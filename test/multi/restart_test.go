package multi_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// PostgreSQL restarted under a running instance (an upgrade, a fail-over).
// While it is down, a signed-in browser's GET /session answers {} but
// keeps its cookie (an outage is not a sign-out), and an e-mail sign-in is
// sent to the error page, not a 500; the process stays up. Once the
// database is back, the same cookie is signed in again: the pool replaces
// its dead connections by itself, no restart of latchkey needed.
func TestDatabaseRestartUnderRunningInstance(t *testing.T) {
	pg := ownServer(t)
	c := startCluster(t, clusterOpts{instances: 1, adminURL: pg.AdminURL})
	a := c.nodes[0]
	br := c.browser()
	c.signInByEmail(br, a, "fay@example.com")
	require.Equal(t, "fay@example.com", br.email(a))
	cookie := br.cookie(sessionCookie)

	require.NoError(t, pg.Stop())
	// The instance had just read the session: its lookup cache may answer
	// it for session.cache_ttl more. Then the outage shows.
	endsWithin(t, br, a, time.Now(), cacheTTL+cacheSlack)
	for range 3 { // the first request meets the dead connections, later ones a refused dial
		r := br.get(a.url("/session"))
		require.Equal(t, http.StatusOK, r.StatusCode, r.body)
		require.Equal(t, "{}", r.body)
		for _, sc := range r.Header.Values("Set-Cookie") {
			require.False(t, strings.HasPrefix(sc, sessionCookie+"="), "the session cookie is left alone: %s", sc)
		}
		require.Equal(t, cookie, br.cookie(sessionCookie))
	}
	r := br.post(a.url("/signin/email"), url.Values{"csrfToken": {br.csrf(a)}, "email": {"gil@example.com"}})
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(t, c.publicURL("/error?error=EmailSignin"), r.location())
	require.True(t, a.running())

	require.NoError(t, pg.Start())
	require.Equal(t, "fay@example.com", br.email(a), "signed in again at the first request")
	require.Equal(t, cookie, br.cookie(sessionCookie))

	// And the instance writes again: a new sign-in goes through.
	other := c.browser()
	c.signInByEmail(other, a, "gil@example.com")
	require.Equal(t, "gil@example.com", other.email(a))
	require.True(t, a.running())
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
