package multi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

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
	pg, err := pgtest.StartCluster() // its own: stopping the shared one would break the others
	require.NoError(t, err)
	t.Cleanup(pg.Close)
	c := startCluster(t, clusterOpts{instances: 1, adminURL: pg.AdminURL})
	a := c.nodes[0]
	br := c.browser()
	c.signInByEmail(br, a, "fay@example.com")
	require.Equal(t, "fay@example.com", br.email(a))
	cookie := br.cookie(sessionCookie)

	require.NoError(t, pg.Stop())

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
