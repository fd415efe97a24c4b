package multi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cacheTTL is session.cache_ttl's default: an instance may answer a
// database session from memory this long, so a session ended on another
// instance must end here within it.
const cacheTTL = time.Second

// cacheSlack is what a test allows beyond cacheTTL for its own polling and
// a loaded machine.
const cacheSlack = 250 * time.Millisecond

// endsWithin polls GET /session on in for br until it answers {} and
// fails unless that happened within limit of since (callers add their
// margin, e.g. cacheSlack); it returns how long it took.
func endsWithin(t *testing.T, br *browser, in *instance, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	for br.email(in) != "" {
		if time.Since(since) > limit {
			t.Fatalf("instance %s still answers the session %s after it was ended (limit %s)", in.name, time.Since(since), limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(since)
}

// The database strategy's lookup cache (session.cache_ttl, 1 s by default)
// on two instances of one database, PostgreSQL and one SQLite file: a
// session ended on the instance that answers ends there at once, even
// though that instance had just read it, and on the other instance, which
// had just read it too, within the TTL. So do a sign-out everywhere and a
// `latchkey sessions revoke` run as a separate process. A new sign-in is
// seen on both at once (nothing negative is cached).
func TestDatabaseSessionCacheEndsSessionsInTime(t *testing.T) {
	for _, backend := range []string{"postgres", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			c := startCluster(t, clusterOpts{})
			a, b := c.nodes[0], c.nodes[1]
			dbURL := c.dbURL
			if backend == "sqlite" {
				dbURL = c.sqliteURL("shared.db")
				a, b = c.startWith("sqlite-a", dbURL), c.startWith("sqlite-b", dbURL)
			}

			// Each check has a copy of the cookie of its own: an answer
			// that ends a session clears the cookie in that browser, and a
			// browser's cookies go to both instances (same host).
			ann := c.browser()
			c.signInByEmail(ann, a, "ann@example.com")
			require.Equal(t, "ann@example.com", ann.email(b), "a sign-in on A is seen on B at once")
			onA, onB := c.sessionCookieCopy(ann), c.sessionCookieCopy(ann)
			cached(t, onA, onB, a, b, "ann@example.com")
			r := ann.signOut(a)
			require.Equal(t, http.StatusFound, r.StatusCode, r.body)
			ended := time.Now()
			require.Empty(t, onA.email(a), "signed out on A: the copy is refused on A at once")
			t.Logf("%s: signed out on A, ended on B after %s", backend, endsWithin(t, onB, b, ended, cacheTTL+cacheSlack))

			// Sign-out everywhere on A ends the user's other browser.
			bob, bobPhone := c.browser(), c.browser()
			c.signInByEmail(bob, a, "bob@example.com")
			c.signInAgainByEmail(bobPhone, b, "bob@example.com")
			onA, onB = c.sessionCookieCopy(bobPhone), c.sessionCookieCopy(bobPhone)
			cached(t, onA, onB, a, b, "bob@example.com")
			r = bob.post(a.url("/signout/all"), url.Values{"csrfToken": {bob.csrf(a)}})
			require.Equal(t, http.StatusFound, r.StatusCode, r.body)
			ended = time.Now()
			require.Empty(t, onA.email(a), "signed out everywhere on A: the other browser at once on A")
			t.Logf("%s: signed out everywhere on A, ended on B after %s", backend, endsWithin(t, onB, b, ended, cacheTTL+cacheSlack))

			// `latchkey sessions revoke` is another process: both instances
			// see it within the TTL.
			cy := c.browser()
			c.signInByEmail(cy, b, "cy@example.com")
			onA, onB = c.sessionCookieCopy(cy), c.sessionCookieCopy(cy)
			cached(t, onA, onB, a, b, "cy@example.com")
			c.admin(dbURL, "sessions", "revoke", "--user", "cy@example.com").ok(t, "revoked the sessions of user cy@example.com (")
			ended = time.Now()
			t.Logf("%s: revoked by the command, ended on A after %s", backend, endsWithin(t, onA, a, ended, cacheTTL+cacheSlack))
			t.Logf("%s: revoked by the command, ended on B after %s", backend, endsWithin(t, onB, b, ended, cacheTTL+cacheSlack))
		})
	}
}

// cached has onA read the session on a twice and onB on b: each instance
// has read it and then answered it again (from its cache, if it keeps one).
func cached(t *testing.T, onA, onB *browser, a, b *instance, addr string) {
	t.Helper()
	for range 2 {
		require.Equal(t, addr, onA.email(a))
		require.Equal(t, addr, onB.email(b))
	}
}

// With session.cache_ttl: 0 every GET /session reads the database: a
// session signed out on one instance is refused on the other at once.
func TestDatabaseSessionCacheOff(t *testing.T) {
	c := startCluster(t, clusterOpts{extraConfig: "session:\n  cache_ttl: 0s\n"})
	a, b := c.nodes[0], c.nodes[1]
	ann := c.browser()
	c.signInByEmail(ann, a, "ann@example.com")
	onA, onB := c.sessionCookieCopy(ann), c.sessionCookieCopy(ann)
	cached(t, onA, onB, a, b, "ann@example.com")
	r := ann.signOut(a)
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	require.Empty(t, onB.email(b), "no cache: refused on B at once")
	require.Empty(t, onA.email(a))
}
