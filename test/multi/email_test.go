package multi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// An e-mail link requested on A and opened on B signs in at once there: the
// token row is in the shared database, and the binding cookie A set (sealed
// with keys from the shared AUTH_SECRET) opens on B. The same kind of link
// opened on B by a browser without that cookie gets the confirm page, as on
// a single instance: the binding, not luck, made the first one immediate.
func TestEmailLinkRequestedOnARedeemedOnB(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	a, b := c.nodes[0], c.nodes[1]

	br := c.browser()
	c.requestLink(br, a, "bea@example.com", c.origin()+"/welcome")
	link := c.linkFor("bea@example.com")
	require.True(t, strings.HasPrefix(link, c.publicURL("/callback/email?")), "the link names SERVICE_URL: %s", link)
	r := br.get(c.at(b, link))
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(t, c.origin()+"/welcome", r.location())
	require.Equal(t, "bea@example.com", br.email(b))
	require.Equal(t, "bea@example.com", br.email(a))
	require.Equal(t, 0, c.count("verification_tokens"), "the link is spent")

	// Another browser's link, opened on B by a browser that did not ask.
	c.requestLink(c.browser(), a, "cal@example.com", c.origin()+"/welcome")
	stranger := c.browser()
	r = stranger.get(c.at(b, c.linkFor("cal@example.com")))
	require.Equal(t, http.StatusOK, r.StatusCode, "a confirm page, not a sign-in")
	require.Contains(t, r.body, "cal@example.com")
	require.Empty(t, stranger.email(b))
	require.Equal(t, 1, c.count("verification_tokens"), "nothing spent by opening it")
}

// One link opened on A and on B at the same moment, by the browser that
// asked for it (so both would sign in at once): in every round exactly one
// request signs in and the other is sent to error=Verification, and the
// user has exactly one session. The token is consumed by DELETE ...
// RETURNING inside the sign-in's transaction, so the database, not either
// process, decides.
func TestOneLinkRacedOnTwoInstances(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	a, b := c.nodes[0], c.nodes[1]
	const rounds = 30
	for i := range rounds {
		addr := fmt.Sprintf("race%d@example.com", i)
		br := c.browser()
		c.requestLink(br, c.nodes[i%2], addr, c.origin()+"/in")
		link := c.linkFor(addr)

		var (
			start sync.WaitGroup
			done  sync.WaitGroup
			got   [2]resp
			errs  [2]error
		)
		start.Add(1)
		for j, in := range []*instance{a, b} {
			done.Add(1)
			go func() {
				defer done.Done()
				req, err := http.NewRequest(http.MethodGet, c.at(in, link), nil)
				if err != nil {
					errs[j] = err
					return
				}
				start.Wait()
				got[j], errs[j] = br.do(req)
			}()
		}
		start.Done()
		done.Wait()

		var signedIn, refused int
		for j := range got {
			require.NoError(t, errs[j], "round %d", i)
			require.Equal(t, http.StatusFound, got[j].StatusCode, "round %d: %s", i, got[j].body)
			switch got[j].location() {
			case c.origin() + "/in":
				signedIn++
			case c.publicURL("/error?error=Verification"):
				refused++
			default:
				t.Fatalf("round %d: unexpected redirect to %s", i, got[j].location())
			}
		}
		require.Equal(t, 1, signedIn, "round %d: exactly one sign-in", i)
		require.Equal(t, 1, refused, "round %d: the other is refused", i)
		require.Equal(t, 1, c.count("sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1", addr), "round %d", i)
		require.Equal(t, 1, c.count("users WHERE email = $1", addr), "round %d: one user", i)
	}
	require.Equal(t, 0, c.count("verification_tokens"))
	// How the losers lost, for whoever reads -v: "concurrent" ones passed
	// the look-up and lost the DELETE, the others found the row gone.
	var concurrent int
	for _, in := range c.nodes {
		concurrent += strings.Count(in.logs.String(), "used by a concurrent request")
	}
	t.Logf("%d of %d rounds were decided by the DELETE inside the transaction", concurrent, rounds)
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}
