package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// The OpenID Provider's grants end with the sign-ins a revocation ended
// ("sign out everywhere", a password reset, `latchkey sessions revoke`),
// whatever the grant is when it is presented: a code not yet exchanged,
// or a refresh token presented after the revocation's row was purged.

// TestOpenIDCodeEndsWithSignOutEverywhere: a code issued before the user
// signed out everywhere (a stolen session's, kept for later) is refused
// at the token endpoint afterwards — no ID token — and a sign-in after
// the revocation gets a code that works.
func TestOpenIDCodeEndsWithSignOutEverywhere(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)
		res, a := r.authorize(c)
		code := r.codeFrom(res, a)

		e.clock.Add(time.Second)
		out := e.post(c, "/signout/all", url.Values{"csrfToken": {e.csrf(c)}})
		require.Equal(t, http.StatusFound, out.StatusCode, out.body)
		tok, _, err := r.exchange(code, a)
		requireGrantRefused(t, err)
		require.Nil(t, tok)

		e.clock.Add(time.Second)
		res, a = r.authorize(e.signedIn(ada))
		_, _, err = r.exchange(r.codeFrom(res, a), a)
		require.NoError(t, err, "a sign-in after the sign-out everywhere")
	})
}

// TestOpenIDRefreshOutlivesNoRevocation: a refresh token left unused
// across a sign-out everywhere stays refused once the purge has run at a
// time the sessions could not have outlived (sessions of a week, a
// refresh token of 30 days): the revocation is kept as long as a token
// it ended could live. It was purged a day after the longest session,
// and the token, read against no revocation, got fresh tokens again.
func TestOpenIDRefreshOutlivesNoRevocation(t *testing.T) {
	week := func(c *config.Config) {
		c.Session.MaxAge = config.Duration(7 * 24 * time.Hour)
		c.Session.AbsoluteMaxAge = config.Duration(7 * 24 * time.Hour)
	}
	eachOP(t, week, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)
		tok, _ := r.signInFlow(c)

		e.clock.Add(time.Second)
		out := e.post(c, "/signout/all", url.Values{"csrfToken": {e.csrf(c)}})
		require.Equal(t, http.StatusFound, out.StatusCode, out.body)

		// Nine days on, the purge runs (at the start of Serve): an expired
		// e-mail link tells when it has.
		e.clock.Add(9 * 24 * time.Hour)
		ctx := context.Background()
		require.NoError(t, e.app.Store().CreateVerificationToken(ctx, "old@example.com", "old-link", e.clock.Now().Add(-time.Hour)))
		mark := len(e.logs.String())
		runBackground(t, e)
		require.Contains(t, logsAfter(e, mark, "purged expired rows"), "purged expired rows")

		_, err := r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
	})
}
