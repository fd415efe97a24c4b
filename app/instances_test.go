package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// TestTwoInstancesOnePostgres: two latchkey instances on one PostgreSQL
// database, with one SERVICE_URL and one secret, serve one browser in
// turns as behind a load balancer: a link asked for on A signs in on B, the
// session is read on both, signing out on A ends it on B (within
// session.cache_ttl), and a link
// clicked on both at once signs in exactly once.
func TestTwoInstancesOnePostgres(t *testing.T) {
	a := startEnv(t, envOpts{postgres: true, smtp: &smtptest.Options{}})
	b := startEnv(t, envOpts{smtp: &smtptest.Options{}, config: func(c *config.Config) { c.DatabaseURL = a.cfg.DatabaseURL }})
	require.Equal(t, a.base, b.base)
	// on is a link of the shared SERVICE_URL sent to one instance.
	on := func(e *env, link string) string { return e.srv.URL + strings.TrimPrefix(link, e.origin) }
	home := a.origin + "/home"

	c := a.browser() // cookies are per host, not port: one browser for both
	link := a.emailLink(c, "ann@example.com", home)
	res := b.get(c, on(b, link))
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, home, res.location())
	for _, e := range []*env{a, b} {
		require.Equal(t, "ann@example.com", userEmail(e.session(c)))
	}
	a.requireError(a.get(a.browser(), on(a, link)), "Verification") // spent for both
	copied, ok := a.jarCookie(c, "next-auth.session-token")
	require.True(t, ok)

	res = a.post(c, "/signout", url.Values{"csrfToken": {a.csrf(c)}, "callbackUrl": {"/bye"}})
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, map[string]any{}, b.session(c))
	// B read the session a moment ago: it may answer it from its lookup
	// cache for session.cache_ttl (1 s), no longer.
	signedOut := time.Now()
	for {
		res = b.rawDo(http.MethodGet, "/session", "next-auth.session-token="+copied, nil)
		if strings.TrimSpace(res.body) == "{}" {
			break
		}
		require.Less(t, time.Since(signedOut), 1250*time.Millisecond, "signed out on A: the copied cookie must be dead on B within cache_ttl")
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, b.counts().Sessions)

	requester := a.browser()
	link = a.emailLink(requester, "bob@example.com", home)
	const clicks = 8
	results := make([]string, clicks)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range clicks {
		e := []*env{a, b}[i%2]
		target, browser := on(e, link), e.browser()
		a.shareBinding(requester, browser) // tabs of the browser that asked, on either instance
		wg.Go(func() {
			<-start
			res, err := browser.Get(target)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			results[i] = res.Header.Get("Location")
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, loc := range results {
		switch loc {
		case home:
			won++
		case a.base + "/error?error=Verification":
		default:
			t.Fatalf("unexpected answer %q", loc)
		}
	}
	require.Equal(t, 1, won, "one link, one sign-in: %q", results)
	counts := a.counts()
	require.EqualValues(t, 2, counts.Users)
	require.EqualValues(t, 1, counts.Sessions)
	require.Zero(t, counts.VerificationTokens)
}
