package app_test

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// domainBrowser is a browser (its own cookie jar) on the configured
// service host, whose requests reach the test server: a jar keeps Domain
// cookies only for a host inside the domain.
func (e *env) domainBrowser() *http.Client {
	e.t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	addr := e.srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Jar: jar, Transport: tr, Timeout: 30 * time.Second, CheckRedirect: stopAtRedirect}
}

// A browser that signed in before cookies.domain was set holds a host-only
// session cookie. When the session cookie is next written (now with
// Domain) the host-only one is cleared: the browser would otherwise send
// both, the host-only one first, and the new session would read as that
// dead token (database) or as junk (jwt: both joined) and end. Written at
// a sign-in over a dead host-only cookie (both strategies), and at a JWT
// re-issue over a live one.
func TestCookieDomainReplacesTheHostOnlyCookie(t *testing.T) {
	const name, service = "next-auth.session-token", "http://auth.example.com/api/auth"
	host, _ := url.Parse("http://auth.example.com/")
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy, config: func(c *config.Config) {
				c.ServiceURL = service
				c.Cookies.Domain = "example.com"
			}})
			u := e.addUser("", "alice@example.com", "")
			c := e.domainBrowser()
			signedInThrice := func(what string) {
				t.Helper()
				for i := range 3 {
					res := e.get(c, service+"/session")
					require.Equal(t, http.StatusOK, res.StatusCode, res.body)
					require.Equal(t, "alice@example.com", userEmail(res.json(t)), "%s: GET /session #%d", what, i+1)
				}
			}

			// A dead host-only cookie, then a sign-in by e-mail.
			c.Jar.SetCookies(host, []*http.Cookie{{Name: name, Value: "dead-" + u.ID, Path: "/"}})
			res := e.get(c, service+"/csrf")
			csrf, _ := res.json(t)["csrfToken"].(string)
			res = e.post(c, service+"/signin/email", url.Values{"csrfToken": {csrf}, "email": {"alice@example.com"}})
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			res = e.get(c, e.link(1))
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			signedInThrice("a sign-in over a dead host-only cookie")
			res = e.get(c, service+"/csrf")
			csrf, _ = res.json(t)["csrfToken"].(string)
			res = e.post(c, service+"/signin/email", url.Values{"csrfToken": {csrf}, "email": {"alice@example.com"}})
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			res = e.get(c, e.link(2))
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			signedInThrice("a sign-in replacing a session")

			if strategy == config.StrategyJWT {
				// A live host-only token minted without auth_time: the
				// first GET /session re-issues it, with Domain.
				c = e.domainBrowser()
				tok := jwtCookie(t, map[string]any{"sub": u.ID, "email": "alice@example.com"}, e.clock.Now())
				c.Jar.SetCookies(host, []*http.Cookie{{Name: name, Value: tok, Path: "/"}})
				signedInThrice("a re-issue over a live host-only cookie")
			}
		})
	}
}
