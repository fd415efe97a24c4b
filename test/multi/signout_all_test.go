package multi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// POST /signout/all on one instance ends the user's sessions on every
// instance, a copy of the cookie included (database sessions at once, jwt
// ones within the poll), keeps another user's, and the user can sign in
// again at once.
func TestSignOutEverywhereOnEveryInstance(t *testing.T) {
	for _, strategy := range []string{"database", "jwt"} {
		t.Run(strategy, func(t *testing.T) {
			c := startClusterSession(t, strategy)
			a, b := c.nodes[0], c.nodes[1]
			ann, bob, stolen := c.annBobAndThief()

			r := ann.post(a.url("/signout/all"), url.Values{"csrfToken": {ann.csrf(a)}, "callbackUrl": {c.origin() + "/bye"}, "json": {"true"}})
			require.Equal(t, http.StatusOK, r.StatusCode, r.body)
			took := c.signedOutEverywhere(stolen)
			t.Logf("the copied session ended on both instances %s after sign-out everywhere", took)
			for _, in := range c.nodes {
				require.Equal(t, "bob@example.com", bob.email(in), "bob's session stays on %s", in.name)
			}

			again := c.browser()
			c.signInAgainByEmail(again, b, "ann@example.com")
			for _, in := range c.nodes {
				require.Equal(t, "ann@example.com", again.email(in), "signed in again, seen on %s", in.name)
			}
		})
	}
}
