package multi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A database session is a row every instance reads: signed in on A, the
// browser is signed in on B and through the proxy, whichever instance
// answers (no sticky sessions); signed out on B, the session is over on A
// too (within session.cache_ttl: A had just read it), even for a copy of
// the cookie that was never cleared (the row is gone, not just the
// browser's cookie).
func TestSessionSeenAndEndedOnEveryInstance(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	a, b := c.nodes[0], c.nodes[1]
	br := c.browser()

	c.signInByEmail(br, a, "ann@example.com")
	require.Equal(t, "ann@example.com", br.email(a))
	require.Equal(t, "ann@example.com", br.email(b), "the session made on A is seen on B")
	for range 6 {
		require.Equal(t, "ann@example.com", userEmail(br.session(c.publicURL("/session"))))
	}
	require.Positive(t, c.proxy.count(a.origin))
	require.Positive(t, c.proxy.count(b.origin), "the proxy spread the requests")

	stolen := br.cookie(sessionCookie)
	require.NotEmpty(t, stolen)
	r := br.signOut(b)
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	signedOut := time.Now()
	require.Empty(t, br.email(a), "signed out on B: the browser's cookie is cleared")
	require.Equal(t, 0, c.count("sessions"))

	other := c.browser()
	other.client.Jar.SetCookies(mustURL(t, a.url("/")), []*http.Cookie{{Name: sessionCookie, Value: stolen, Path: "/"}})
	require.Empty(t, other.email(b), "the old cookie is refused on B at once")
	endsWithin(t, other, a, signedOut, cacheTTL+cacheSlack) // and on A within session.cache_ttl
}
