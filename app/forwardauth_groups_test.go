package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/groupstore"
)

// Groups at forward-auth, in both session strategies and on both
// databases: an access rule with groups admits a member (an admin-given
// membership, or one a groups rule gives a verified address's domain) and
// answers 403 to anyone else; a 200 names the user's groups in
// Remote-Groups (comma-separated, sorted), and has no such header for a
// user without any. An address nobody verified gets no rule's groups, but
// keeps the ones an admin gave its user.
func TestForwardAuthGroups(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startEnv(t, b.opts(envOpts{ownURL: true, config: func(c *config.Config) {
				c.TrustedProxies = []string{"127.0.0.1/32"}
				c.Access = []config.AccessRule{
					{Hosts: []string{"ops.example.com"}, Groups: []string{"ops"}},
					{Hosts: []string{"staff.example.com"}, Emails: []string{"root@example.net"}, Groups: []string{"staff"}},
					{Hosts: []string{"open.example.com"}, Anyone: true},
				}
				c.Groups.Rules = []config.GroupRule{{Domains: []string{"example.com"}, Groups: []string{"staff", "everyone"}}}
			}}))
			ctx := context.Background()
			store := groupstore.New(e.app.Store())
			// cookie signs in a new user with address, verified or not, in
			// the given stored groups.
			cookie := func(address string, verified bool, groups ...string) string {
				u := &models.User{ID: models.NewID(), Email: &address}
				if verified {
					now := time.Now()
					u.EmailVerified = &now
				}
				require.NoError(t, e.app.Store().CreateUser(ctx, u))
				for _, g := range groups {
					_, err := store.Add(ctx, u.ID, g, time.Now())
					require.NoError(t, err)
				}
				if b.strategy == config.StrategyJWT {
					claims := map[string]any{"sub": u.ID, "email": address, "auth_time": time.Now().Unix()}
					if verified {
						claims[session.VerifiedEmailClaim] = address
					}
					return "next-auth.session-token=" + jwtCookie(t, claims, time.Now())
				}
				return "next-auth.session-token=" + e.addDBSession(u, time.Now().Add(time.Hour))
			}
			ann := cookie("ann@example.com", true, "ops")           // stored ops; staff, everyone by domain
			bob := cookie("bob@example.org", true)                  // no groups
			mallory := cookie("mallory@example.com", false)         // unverified: no domain groups
			eve := cookie("eve@example.com", false, "ops", "audit") // unverified, but an admin put her in ops
			root := cookie("root@example.net", true, "Staff")       // names are case-sensitive
			for _, tc := range []struct {
				cookie, host string
				want         int
				groups       string // Remote-Groups on a 200; "": none
			}{
				{ann, "ops.example.com", http.StatusOK, "everyone,ops,staff"},
				{ann, "staff.example.com", http.StatusOK, "everyone,ops,staff"},
				{ann, "open.example.com", http.StatusOK, "everyone,ops,staff"},
				{bob, "ops.example.com", http.StatusForbidden, ""},
				{bob, "staff.example.com", http.StatusForbidden, ""},
				{bob, "open.example.com", http.StatusOK, ""},
				{mallory, "staff.example.com", http.StatusForbidden, ""},
				{mallory, "open.example.com", http.StatusOK, ""},
				{eve, "ops.example.com", http.StatusOK, "audit,ops"},
				{eve, "staff.example.com", http.StatusForbidden, ""},
				{root, "staff.example.com", http.StatusOK, "Staff"}, // by address
				{root, "ops.example.com", http.StatusForbidden, ""},
			} {
				for _, path := range []string{authRequestPath, forwardAuthPath} {
					res := e.rawDo(http.MethodGet, e.srv.URL+path, tc.cookie, nil, "X-Forwarded-Host", tc.host)
					requireAuthzAnswer(t, res, tc.want)
					if tc.want != http.StatusOK {
						continue
					}
					require.NotEmpty(t, res.Header.Get("Remote-User"))
					if tc.groups == "" {
						require.Empty(t, res.Header.Values("Remote-Groups"), "%s", tc.host)
					} else {
						require.Equal(t, []string{tc.groups}, res.Header.Values("Remote-Groups"), "%s", tc.host)
					}
				}
			}
		})
	}
}

// With database sessions, forward-auth reads the user's stored groups in
// the session's own statement (issue #36): a session read from the
// database comes with its groups as they are now, so a membership an
// admin adds or removes elsewhere (another instance, `latchkey groups
// add`: straight in the database) counts at the next request whose
// session is not in the lookup cache, instead of within the groups
// cache's 5 s. Both databases, lookup cache off.
func TestForwardAuthReadsGroupsWithTheSession(t *testing.T) {
	eachDatabase(t, func(t *testing.T, postgres bool) {
		e := startEnv(t, envOpts{ownURL: true, strategy: config.StrategyDatabase, postgres: postgres, config: func(c *config.Config) {
			c.TrustedProxies = []string{"127.0.0.1/32"}
			c.Session.CacheTTL = 0
			c.Access = []config.AccessRule{{Hosts: []string{"ops.example.com"}, Groups: []string{"ops"}}}
		}})
		ctx := context.Background()
		elsewhere := groupstore.New(e.app.Store())
		address := "kim@example.org"
		u := &models.User{ID: models.NewID(), Email: &address}
		require.NoError(t, e.app.Store().CreateUser(ctx, u))
		cookie := "next-auth.session-token=" + e.addDBSession(u, time.Now().Add(time.Hour))
		ask := func() resp {
			return e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, cookie, nil, "X-Forwarded-Host", "ops.example.com")
		}

		requireAuthzAnswer(t, ask(), http.StatusForbidden)
		for _, g := range []string{"ops", "billing"} {
			_, err := elsewhere.Add(ctx, u.ID, g, time.Now())
			require.NoError(t, err)
		}
		res := ask()
		requireAuthzAnswer(t, res, http.StatusOK)
		require.Equal(t, []string{"billing,ops"}, res.Header.Values("Remote-Groups"), "sorted, at once")

		_, err := elsewhere.Remove(ctx, u.ID, "ops")
		require.NoError(t, err)
		requireAuthzAnswer(t, ask(), http.StatusForbidden)
	})
}
