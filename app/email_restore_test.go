package app_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// When the session cannot be started after the link was redeemed (here a
// JWT hook that refuses once), the link is put back: the user is told
// AccessDenied and the same link works on the next click (its expiry, as
// read back from either database, is the one written again).
func TestEmailLinkRestoredWhenSessionFails(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		var refusals atomic.Int32
		refusals.Store(1)
		hooks := &signin.Hooks{JWT: func(token map[string]any, in signin.JWTInput) map[string]any {
			if in.Trigger != "" && refusals.Add(-1) >= 0 {
				return nil
			}
			return token
		}}
		e := startMail(t, envOpts{strategy: config.StrategyJWT, hooks: hooks, postgres: pg})
		c := e.browser() // the browser that asks for the link opens it
		link := e.emailLink(c, "alice@example.com", e.origin+"/home")

		e.requireError(e.get(c, link), "AccessDenied")
		require.EqualValues(t, 1, e.tokens(), "the link is not spent by a failed sign-in")
		require.Equal(t, map[string]any{}, e.session(c))

		res := e.get(c, link)
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		require.Equal(t, e.origin+"/home", res.location())
		addr, _ := e.sessionUser(c)
		require.Equal(t, "alice@example.com", addr)
		require.Zero(t, e.tokens())
	})
}
