package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
)

// TestOpenIDRefreshAbandonedMidRotation: a relying party that gives up on
// a refresh while its rotation waits for the database (here, for a lock a
// test transaction holds on the refresh tokens) leaves everything as it
// was: the rotation's transaction is rolled back with the request, no
// token is written or used up, the same refresh token works on the retry,
// and the failure is logged at info with client_gone=true, not as the
// error the library logs for a server_error (main wires logs.ClientGone
// into slog's default logger, which the library logs through; so does
// this test). Not parallel: it swaps slog's default logger.
func TestOpenIDRefreshAbandonedMidRotation(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		var lib logBuffer
		prev := slog.Default()
		slog.SetDefault(slog.New(logs.ClientGone(slog.NewTextHandler(&lib, nil))))
		t.Cleanup(func() { slog.SetDefault(prev) })

		e := startOP(t, backend{name: "database", strategy: config.StrategyDatabase, postgres: pg}, nil)
		r := e.relyingParty("app", rpSecret, offline...)
		tok, _ := r.signInFlow(e.signedIn(ada))
		before, _ := e.oidcTokens()

		// Hold the refresh tokens: row locks on PostgreSQL, the write
		// lock on SQLite (the app's transactions are BEGIN IMMEDIATE).
		hold := e.app.Store().DB().Begin()
		require.NoError(t, hold.Error)
		held := true
		t.Cleanup(func() { // a failed assertion must not leave the lock to the app's Close
			if held {
				hold.Rollback()
			}
		})
		require.NoError(t, hold.Exec("UPDATE oidc_tokens SET used_at = used_at WHERE kind = 'refresh'").Error)

		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
		req, err := http.NewRequest(http.MethodPost, r.endpoint("token_endpoint"), strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", basicAuth("app", rpSecret))
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err = r.http.Do(req.WithContext(ctx))
		require.Error(t, err, "the refresh answered while its token was locked")

		// The request ends when the database gives up (at once on
		// PostgreSQL, which cancels the statement; after the busy
		// timeout on SQLite): its line is the sign.
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end) && !strings.Contains(lib.String(), `msg="request error"`); {
			time.Sleep(20 * time.Millisecond)
		}
		require.Contains(t, lib.String(), "client_gone=true")
		require.Contains(t, lib.String(), `msg="request error"`)
		require.NoError(t, hold.Rollback().Error)
		held = false

		require.NotContains(t, lib.String(), "level=ERROR")
		require.NotContains(t, lib.String(), "level=WARN")
		require.NotContains(t, lib.String(), tok.RefreshToken)
		after, _ := e.oidcTokens()
		require.Equal(t, before, after, "the abandoned rotation wrote tokens")

		next, err := r.refresh(tok.RefreshToken)
		require.NoError(t, err, "the refresh token was used up by the abandoned rotation")
		require.NotEmpty(t, next.AccessToken)
	})
}

// TestOpenIDReuseRevokesWhenTheClientGivesUp: a reused refresh token or
// code says a secret leaked, so the family its first use led to is
// revoked. That revocation must not depend on the caller waiting for the
// answer: a relying party (or whoever replays the stolen secret) that
// gives up while the revocation waits for the database — here for locks
// a test transaction holds on the tokens — still gets the family revoked
// once the database answers, and the warning is logged as a warning.
func TestOpenIDReuseRevokesWhenTheClientGivesUp(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startOP(t, backend{name: "database", strategy: config.StrategyDatabase, postgres: pg}, nil)
		r := e.relyingParty("app", rpSecret, offline...)

		// abandoned sends req while the tokens are held, gives up after
		// 300 ms, lets the database go 500 ms later, and waits for the
		// reuse's line.
		abandoned := func(req *http.Request, line string) string {
			mark := len(e.logs.String())
			hold := e.app.Store().DB().Begin()
			require.NoError(t, hold.Error)
			held := true
			release := func() {
				if held {
					held = false
					require.NoError(t, hold.Rollback().Error)
				}
			}
			t.Cleanup(release)
			// Row locks on PostgreSQL, the write lock on SQLite: the
			// token's read goes through, the revocation's write waits.
			require.NoError(t, hold.Exec("UPDATE oidc_tokens SET used_at = used_at").Error)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := r.http.Do(req.WithContext(ctx))
			require.Error(t, err, "the reuse was answered while the tokens were held")
			time.Sleep(500 * time.Millisecond)
			release()
			var lines string
			for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if lines = e.logs.String()[mark:]; strings.Contains(lines, "openid: ") {
					break
				}
			}
			require.Contains(t, lines, "level=WARN msg=\""+line)
			require.NotContains(t, lines, "level=ERROR")
			return lines
		}
		tokenRequest := func(form url.Values) *http.Request {
			req, err := http.NewRequest(http.MethodPost, r.endpoint("token_endpoint"), strings.NewReader(form.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", basicAuth("app", rpSecret))
			return req
		}

		// A refresh token used twice.
		first, _ := r.signInFlow(e.signedIn(ada))
		second, err := r.refresh(first.RefreshToken)
		require.NoError(t, err)
		lines := abandoned(tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}),
			"openid: refresh token used twice; its family is revoked")
		require.NotContains(t, lines, first.RefreshToken)
		_, err = r.refresh(second.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(second.AccessToken).StatusCode)

		// A code exchanged twice.
		c := e.signedIn(ada)
		res, a := r.authorize(c)
		if res.StatusCode == http.StatusOK {
			res = e.consent(c, res, "allow")
		}
		code := r.codeFrom(res, a)
		tok, _, err := r.exchange(code, a)
		require.NoError(t, err)
		abandoned(tokenRequest(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {rpRedirect}, "code_verifier": {a.verifier}}),
			"openid: authorization code used twice; its tokens are revoked")
		_, err = r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode)
		_, live := e.oidcTokens()
		require.Zero(t, live, "a reused secret's family outlived the reuse")
	})
}
