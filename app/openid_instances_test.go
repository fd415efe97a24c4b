package app_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// TestOpenIDAcrossInstances: two instances on one PostgreSQL database,
// with one SERVICE_URL (the issuer) and one secret, behind a load
// balancer: an authorization started and signed in on A is exchanged on
// B, its refresh token used on A and the new access token answered by B's
// userinfo; a code exchanged on A and replayed on B is refused and what A
// issued is revoked; a refresh token used on A and replayed on B revokes
// its family; a code sent to both at once is exchanged once.
func TestOpenIDAcrossInstances(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	a := startEnv(t, envOpts{ownURL: true, postgres: true, smtp: &smtptest.Options{}, clock: clock, config: opConfig(nil)})
	b := startEnv(t, envOpts{smtp: &smtptest.Options{}, catcher: a.smtp, clock: clock, config: opConfig(func(c *config.Config) {
		c.DatabaseURL, c.ServiceURL = a.cfg.DatabaseURL, a.cfg.ServiceURL
	})})
	require.Equal(t, a.base, b.base, "one issuer")
	origin, err := url.Parse(a.base)
	require.NoError(t, err)
	// onB sends what is meant for the issuer's host to B.
	onB := func(c *http.Client) *http.Client { return routedTo(c, origin.Host, b.srv.URL) }

	rA := a.relyingParty("app", rpSecret, offline...)
	rB := b.relyingPartyVia(onB(b.srv.Client()), "app", rpSecret, offline...)
	require.Equal(t, rA.endpoint("token_endpoint"), rB.endpoint("token_endpoint"))

	// Authorize on A: the request waits through the sign-in and the
	// consent; the code goes to B.
	c := a.browser()
	page, auth := rA.authorize(c)
	res := a.consent(c, a.signInFrom(c, page, ada), "allow")
	tok, id, err := rB.exchange(rB.codeFrom(res, auth), auth)
	require.NoError(t, err)

	// Refresh on A, userinfo on B.
	next, err := rA.refresh(tok.RefreshToken)
	require.NoError(t, err)
	again, err := rA.verify(next)
	require.NoError(t, err)
	require.Equal(t, id.Subject, again.Subject)
	res = rB.userinfo(next.AccessToken)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	require.Equal(t, id.Subject, res.json(t)["sub"])

	// The used refresh token replayed on B: the family goes, seen on A.
	_, err = rB.refresh(tok.RefreshToken)
	requireGrantRefused(t, err)
	require.Equal(t, http.StatusUnauthorized, rA.userinfo(next.AccessToken).StatusCode)
	_, err = rA.refresh(next.RefreshToken)
	requireGrantRefused(t, err)

	// A code exchanged on A and replayed on B.
	res, auth = rA.authorize(c)
	code := rA.codeFrom(res, auth)
	first, _, err := rA.exchange(code, auth)
	require.NoError(t, err)
	_, _, err = rB.exchange(code, auth)
	requireGrantRefused(t, err)
	require.Equal(t, http.StatusUnauthorized, rA.userinfo(first.AccessToken).StatusCode)
	_, err = rA.refresh(first.RefreshToken)
	requireGrantRefused(t, err)

	// One code at both at once: one exchange wins.
	res, auth = rB.authorize(onB(c))
	code = rB.codeFrom(res, auth)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range []*rp{rA, rB} {
		wg.Go(func() { _, _, errs[i] = r.exchange(code, auth) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		}
	}
	require.Equal(t, 1, won, "%v", errs)
}
