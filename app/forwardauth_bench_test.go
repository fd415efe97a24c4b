package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models/groupstore"
)

// BenchmarkAuthRequest measures GET /authz/auth-request, which a proxy
// calls on every request it passes on, beside BenchmarkGetSession*: the
// same session read, no CSRF cookie, no JSON. The user's groups are looked
// up on every request (answered by the groups' 5 s cache); the /groups
// runs give the user two stored groups and one from a domain rule, so the
// answer carries Remote-Groups.
func BenchmarkAuthRequest(b *testing.B) {
	for _, strategy := range strategies() {
		for _, withGroups := range []bool{false, true} {
			name := strategy
			if withGroups {
				name += "/groups"
			}
			b.Run(name, func(b *testing.B) {
				e := startEnv(b, envOpts{strategy: strategy, config: func(c *config.Config) {
					if withGroups {
						c.Groups.Rules = []config.GroupRule{{Domains: []string{"example.com"}, Groups: []string{"staff"}}}
					}
				}})
				// Verified: Remote-Email names a verified address only (issue 26 M2).
				u := e.addVerifiedUser("Bench", "bench@example.com")
				want := ""
				if withGroups {
					for _, g := range []string{"ops", "admins"} {
						_, err := groupstore.New(e.app.Store()).Add(context.Background(), u.ID, g, time.Now())
						require.NoError(b, err)
					}
					want = "admins,ops,staff"
				}
				tok := jwtCookie(b, map[string]any{"name": "Bench", "email": "bench@example.com", session.VerifiedEmailClaim: "bench@example.com",
					"sub": u.ID, "auth_time": time.Now().Unix()}, time.Now())
				if strategy == config.StrategyDatabase {
					tok = e.addDBSession(u, time.Now().Add(30*24*time.Hour))
				}
				benchGet(b, e.app.Handler(), "/authz/auth-request", "next-auth.session-token="+tok, func(rec *httptest.ResponseRecorder) bool {
					return rec.Code == http.StatusOK && rec.Header().Get("Remote-Email") == "bench@example.com" &&
						(want != "" || len(rec.Header().Values("Remote-Groups")) == 0) && (want == "" || rec.Header().Get("Remote-Groups") == want)
				})
			})
		}
	}
}
