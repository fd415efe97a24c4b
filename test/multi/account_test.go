package multi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The account page across two real instances on one PostgreSQL: a session
// ended on A (its own id, from A's list) ends on both instances — database
// sessions within session.cache_ttl, jwt ones within the revocation poll —
// and so does every session of an account deleted on A.
func TestAccountPageAcrossInstances(t *testing.T) {
	for _, strategy := range []string{"database", "jwt"} {
		t.Run(strategy, func(t *testing.T) {
			c := startClusterSession(t, strategy)
			a, b := c.nodes[0], c.nodes[1]
			ann, phone := c.browser(), c.browser()
			c.signInByEmail(ann, a, "ann@example.com")
			c.signInAgainByEmail(phone, b, "ann@example.com")

			var list []struct {
				ID      string `json:"id"`
				Current bool   `json:"current"`
			}
			r := phone.get(b.url("/list-sessions"))
			require.Equal(t, http.StatusOK, r.StatusCode, r.body)
			require.NoError(t, json.Unmarshal([]byte(r.body), &list))
			require.Len(t, list, 2, "both instances' sign-ins")
			victim := ""
			for _, s := range list {
				if s.Current {
					victim = s.ID
				}
			}
			r = ann.post(a.url("/revoke-session"), url.Values{"csrfToken": {ann.csrf(a)}, "id": {victim}, "json": {"true"}})
			require.Equal(t, http.StatusOK, r.StatusCode, r.body)
			ended := time.Now()
			for _, in := range c.nodes {
				endsWithin(t, phone, in, ended, poll+cacheTTL+3*time.Second)
				require.Equal(t, "ann@example.com", ann.email(in), "the session that ended the other stays on %s", in.name)
			}

			time.Sleep(time.Second)            // past the second the account's sign-ins began in
			copied := c.sessionCookieCopy(ann) // the deletion clears ann's own cookie, not a copy
			r = ann.post(a.url("/delete-user"), url.Values{"csrfToken": {ann.csrf(a)}, "confirm": {"ann@example.com"}, "json": {"true"}})
			require.Equal(t, http.StatusOK, r.StatusCode, r.body)
			require.Zero(t, c.count("users WHERE email = 'ann@example.com'"))
			c.signedOutEverywhere(copied)
		})
	}
}
