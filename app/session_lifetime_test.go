package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// signInByEmail signs a fresh browser in as address through the e-mail link
// and returns it.
func (e *env) signInByEmail(address string) *http.Client {
	e.t.Helper()
	c := e.browser()
	res := e.get(c, e.emailLink(c, address, e.origin+"/"))
	require.Equal(e.t, http.StatusFound, res.StatusCode, res.body)
	got, _ := e.sessionUser(c)
	require.Equal(e.t, address, got)
	return c
}

// TestSessionAbsoluteLifetime: a session used every few days still ends at
// sign-in + absolute_max_age, and neither the expires GET /session reports
// nor the cookie's Expires ever reaches past that.
func TestSessionAbsoluteLifetime(t *testing.T) {
	const absolute = 45 * 24 * time.Hour // max_age stays 30 days
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy, config: func(c *config.Config) {
				c.Session.AbsoluteMaxAge = config.Duration(absolute)
			}})
			start := e.clock.Now()
			end := start.Add(absolute)
			c := e.signInByEmail("alice@example.com")

			check := func() (expires time.Time, res resp) {
				t.Helper()
				res = e.get(c, "/session")
				require.Equal(t, http.StatusOK, res.StatusCode)
				body := res.json(t)
				require.Equal(t, "alice@example.com", userEmail(body), "signed in at %v", e.clock.Now().Sub(start))
				exp, err := time.Parse(time.RFC3339, body["expires"].(string))
				require.NoError(t, err)
				require.False(t, exp.After(end), "expires %v is past sign-in + absolute_max_age", exp)
				ck, ok := findCookie(res.Header, "next-auth.session-token")
				if !ok {
					// Neither strategy re-sets its cookie when that would move
					// nothing: the one the browser holds already expires at the end.
					require.True(t, end.Equal(exp), "not re-issued while it could slide: expires %v", exp)
					return exp, res
				}
				require.False(t, ck.Expires.After(end), "cookie Expires %v is past sign-in + absolute_max_age", ck.Expires)
				return exp, res
			}
			for e.clock.Now().Add(5 * 24 * time.Hour).Before(end) {
				e.clock.Add(5 * 24 * time.Hour)
				check()
			}
			e.clock.Add(end.Sub(e.clock.Now()) - time.Second)
			exp, _ := check()
			require.True(t, end.Equal(exp), "the last second: expires is the absolute end, %v", exp)

			e.clock.Add(time.Second)
			res := e.get(c, "/session")
			require.Equal(t, "{}", strings.TrimSpace(res.body), "ended at sign-in + absolute_max_age despite the activity")
			requireCleared(t, res.Header, "next-auth.session-token")
			require.EqualValues(t, 0, e.counts().Sessions, "no row is left behind")
		})
	}
}

// TestSignOutEverywhere: POST /signout/all. Every session of the user ends,
// another user's stays: by a revocation in both strategies (database
// sessions' rows go with it), which this instance applies at once; the user can sign in
// again right after. A missing csrfToken gets POST /signout's retry
// redirect and ends nothing.
func TestSignOutEverywhere(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy})
			alice1 := e.signInByEmail("alice@example.com")
			alice2 := e.signInByEmail("alice@example.com")
			bob := e.signInByEmail("bob@example.com")
			before := e.counts().Sessions

			e.csrf(alice1)
			res := e.post(alice1, "/signout/all", url.Values{"callbackUrl": {e.origin + "/bye"}})
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.base+"/signout?csrf=true", res.location(), "the retry answer of POST /signout")
			require.Equal(t, before, e.counts().Sessions, "nothing deleted")
			for _, c := range []*http.Client{alice1, alice2, bob} {
				addr, _ := e.sessionUser(c)
				require.NotEmpty(t, addr, "still signed in")
			}

			e.clock.Add(time.Second) // a revocation ends the sessions signed in before its second
			res = e.post(alice1, "/signout/all", url.Values{"csrfToken": {e.csrf(alice1)}, "callbackUrl": {e.origin + "/bye"}})
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/bye", res.location())
			requireCleared(t, res.Header, "next-auth.session-token")
			addr, _ := e.sessionUser(alice1)
			require.Empty(t, addr, "this browser is signed out")
			addr, _ = e.sessionUser(bob)
			require.Equal(t, "bob@example.com", addr, "another user's session stays")
			addr, _ = e.sessionUser(alice2)
			require.Empty(t, addr, "the user's session in another browser ends too")
			if strategy == config.StrategyDatabase {
				require.EqualValues(t, 1, e.counts().Sessions, "only Bob's row is left")
			}
			require.Contains(t, e.logs.String(), "signed out everywhere: sessions revoked")
			again := e.signInByEmail("alice@example.com")
			addr, _ = e.sessionUser(again)
			require.Equal(t, "alice@example.com", addr, "a sign-in right after sign-out everywhere lasts")

			// JSON mode, as the v4 client posts, and without a session: {url}.
			res = e.post(alice1, "/signout/all", url.Values{"csrfToken": {e.csrf(alice1)}, "callbackUrl": {"/bye"}, "json": {"true"}})
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Equal(t, map[string]any{"url": e.origin + "/bye"}, res.json(t))
		})
	}
}

// TestEndedJWTSessionAfterAbsoluteMaxAgeRaised: an operator raises
// session.absolute_max_age (30 → 90 days) by starting instances with the
// new config. A JWT session re-issued under it lives past the 30 days its
// sign-in record was first given; ended from the account page, it must
// stay ended for as long as its token could live, on every instance.
// Its record used to keep the first absolute
// end, so the ended mark was dropped (and the row purged) at 30 days, and
// the ended token signed in again until its own expiry.
func TestEndedJWTSessionAfterAbsoluteMaxAgeRaised(t *testing.T) {
	const day = 24 * time.Hour
	a := startPasswords(t, envOpts{strategy: config.StrategyJWT})
	raised := func(c *config.Config) {
		c.DataDir, c.ServiceURL = a.cfg.DataDir, a.cfg.ServiceURL // one SQLite file
		c.Session.AbsoluteMaxAge = config.Duration(90 * day)
	}
	a.addPasswordUser("ada@example.com", goodPassword, true)
	stolen, laptop := a.browser(), a.browser()
	for _, c := range []*http.Client{stolen, laptop} {
		require.Equal(t, http.StatusOK, a.passwordSignIn(c, "ada@example.com", goodPassword).StatusCode)
	}
	b := startPasswords(t, envOpts{strategy: config.StrategyJWT, clock: a.clock, catcher: a.smtp, config: raised})

	a.clock.Add(25 * day) // re-issued on b: now valid until day 55
	for _, c := range []*http.Client{stolen, laptop} {
		require.NotEmpty(t, b.session(c))
	}
	stolenID := ""
	for _, s := range a.sessionsOf(stolen) {
		if s.Current {
			stolenID = s.ID
		}
	}
	token, ok := a.jarCookie(stolen, "next-auth.session-token") // the thief keeps it
	require.True(t, ok)
	res := a.apiPost(laptop, "/revoke-session", "id", stolenID)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	require.Empty(t, a.session(stolen), "ended")

	// Past the first absolute end, within the token's life; purged as
	// every instance does each hour.
	a.clock.Add(6 * day)
	_, err := b.app.Store().PurgeExpired(t.Context(), a.clock.Now())
	require.NoError(t, err)
	// B reads the ended sign-ins again (its poll; here the reload after
	// an account-page action, which ends no other session).
	res = b.apiPost(laptop, "/revoke-other-sessions")
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	res = b.rawDo(http.MethodGet, "/session", "next-auth.session-token="+token, nil)
	require.Equal(t, "{}", strings.TrimSpace(res.body), "an ended session stays ended")
	require.NotEmpty(t, b.session(laptop))
}
