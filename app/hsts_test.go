package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// Under an https SERVICE_URL every answer carries Strict-Transport-Security
// (a year by default): pages, redirects, errors, static files, JSON (a
// first visit's cookieless GET /session included: a front end that only
// calls it may be all a browser fetches from latchkey) and forward-auth's
// answers. hsts: sets its max-age and includeSubDomains. Over http no
// answer carries it: browsers ignore it there, and it must never pin a
// developer's host to https.
func TestStrictTransportSecurity(t *testing.T) {
	signedIn := func(t *testing.T) string {
		return "__Secure-next-auth.session-token=" + jwtCookie(t, map[string]any{"name": "Ada", "email": "ada@example.com", "sub": "user-1", "auth_time": time.Now().Unix()}, time.Now())
	}
	answers := func(e *env, session string) map[string]resp {
		return map[string]resp{
			"GET /signin":                       e.rawDo(http.MethodGet, "/signin", "", nil),
			"GET /session, first visit":         e.rawDo(http.MethodGet, "/session", "", nil),
			"GET /session, signed in":           e.rawDo(http.MethodGet, "/session", session, nil),
			"GET /csrf":                         e.rawDo(http.MethodGet, "/csrf", "", nil),
			"GET /providers":                    e.rawDo(http.MethodGet, "/providers", "", nil),
			"POST /signout without CSRF":        e.rawDo(http.MethodPost, "/signout", "", nil),
			"GET /error":                        e.rawDo(http.MethodGet, "/error?error=Verification", "", nil),
			"GET /static/style.css":             e.rawDo(http.MethodGet, "/static/style.css", "", nil),
			"GET unknown action":                e.rawDo(http.MethodGet, "/nosuch", "", nil),
			"GET outside the base path":         e.rawDo(http.MethodGet, e.srv.URL+"/elsewhere", "", nil),
			"forward-auth, not signed in":       e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, "", nil),
			"forward-auth, signed in":           e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, session, nil),
			"forward-auth redirect to sign in":  e.rawDo(http.MethodGet, e.srv.URL+forwardAuthPath, "", nil, "X-Forwarded-Proto", "https", "X-Forwarded-Host", "localhost", "X-Forwarded-Uri", "/"),
			"POST /signin/email, JSON redirect": e.rawDo(http.MethodPost, "/signin/email", "", nil, "Content-Type", "application/x-www-form-urlencoded"),
		}
	}
	https := func(c *config.Config) { c.ServiceURL = "https://localhost/api/auth" }
	for _, tc := range []struct {
		name string
		cfg  func(*config.Config)
		want string
	}{
		{"https, default", https, "max-age=31536000"},
		{"https, configured", func(c *config.Config) {
			https(c)
			c.HSTS = config.HSTS{MaxAge: config.Duration(time.Hour), IncludeSubdomains: true}
		}, "max-age=3600; includeSubDomains"},
		{"https, withdrawn", func(c *config.Config) {
			https(c)
			c.HSTS.MaxAge = 0
		}, "max-age=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, envOpts{strategy: config.StrategyJWT, config: tc.cfg})
			got := answers(e, signedIn(t))
			require.Equal(t, http.StatusOK, got["forward-auth, signed in"].StatusCode, "the session cookie works")
			require.Equal(t, "{}", got["GET /session, first visit"].body)
			for what, res := range got {
				require.Equal(t, []string{tc.want}, res.Header.Values("Strict-Transport-Security"), "%s (%d)", what, res.StatusCode)
			}
		})
	}
	t.Run("http", func(t *testing.T) {
		e := startEnv(t, envOpts{strategy: config.StrategyJWT})
		for what, res := range answers(e, "next-auth.session-token="+jwtCookie(t, map[string]any{"sub": "user-1", "auth_time": time.Now().Unix()}, time.Now())) {
			require.Empty(t, res.Header.Values("Strict-Transport-Security"), what)
		}
	})
}
