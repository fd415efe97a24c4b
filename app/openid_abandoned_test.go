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
	"golang.org/x/oauth2"

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
		release := holdLocks(t, e.app.Store().DB(), "UPDATE oidc_tokens SET used_at = used_at WHERE kind = 'refresh'")

		req := tokenRequest(t, r, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := r.http.Do(req.WithContext(ctx))
		require.Error(t, err, "the refresh answered while its token was locked")

		// The request ends when the database gives up (at once on
		// PostgreSQL, which cancels the statement; after the busy
		// timeout on SQLite): its line is the sign.
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end) && !strings.Contains(lib.String(), `msg="request error"`); {
			time.Sleep(20 * time.Millisecond)
		}
		require.Contains(t, lib.String(), "client_gone=true")
		require.Contains(t, lib.String(), `msg="request error"`)
		release()

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
			// Row locks on PostgreSQL, the write lock on SQLite: the
			// token's read goes through, the revocation's write waits.
			release := holdLocks(t, e.app.Store().DB(), "UPDATE oidc_tokens SET used_at = used_at")
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := r.http.Do(req.WithContext(ctx))
			require.Error(t, err, "the reuse was answered while the tokens were held")
			time.Sleep(500 * time.Millisecond)
			release()
			lines := logsAfter(e, mark, "openid: ")
			require.Contains(t, lines, "level=WARN msg=\""+line)
			require.NotContains(t, lines, "level=ERROR")
			return lines
		}

		// A refresh token used twice.
		first, _ := r.signInFlow(e.signedIn(ada))
		second, err := r.refresh(first.RefreshToken)
		require.NoError(t, err)
		lines := abandoned(tokenRequest(t, r, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}),
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
		abandoned(tokenRequest(t, r, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {rpRedirect}, "code_verifier": {a.verifier}}),
			"openid: authorization code used twice; its tokens are revoked")
		_, err = r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode)
		_, live := e.oidcTokens()
		require.Zero(t, live, "a reused secret's family outlived the reuse")
	})
}

// tokenRequest is a POST of form to r's token endpoint, authenticated as
// the confidential client "app".
func tokenRequest(t *testing.T, r *rp, form url.Values) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.endpoint("token_endpoint"), strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", basicAuth("app", rpSecret))
	return req
}

// TestOpenIDLogoutRevokesWhenTheBrowserGivesUp: an RP-initiated logout
// ends the latchkey session and then the application's grant; a browser
// that gives up while the grant's revocation waits for the database (row
// locks a test transaction holds on the tokens) still has the grant
// revoked once the database answers, rather than a session ended with its
// application's tokens alive. PostgreSQL only: on SQLite the held write
// lock stops the session's own end first, and nothing is revoked by a
// logout that answers "try again".
func TestOpenIDLogoutRevokesWhenTheBrowserGivesUp(t *testing.T) {
	e := startOP(t, backend{name: "database", strategy: config.StrategyDatabase, postgres: true}, nil)
	r := e.relyingParty("app", rpSecret, offline...)
	c := e.signedIn(ada)
	tok, _ := r.signInFlow(c)
	_, live := e.oidcTokens()
	require.NotZero(t, live)

	res := e.post(c, "/oidc/end_session", url.Values{"id_token_hint": {tok.Extra("id_token").(string)}, "post_logout_redirect_uri": {rpLogout}})
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	signOut := res.location() // the logout itself, which the browser follows

	mark := len(e.logs.String())
	release := holdLocks(t, e.app.Store().DB(), "UPDATE oidc_tokens SET used_at = used_at")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, signOut, nil)
	require.NoError(t, err)
	_, err = noRedirects(c).Do(req)
	require.Error(t, err, "the logout answered while the tokens were held")
	time.Sleep(500 * time.Millisecond)
	release()

	lines := logsAfter(e, mark, "msg=request method=GET")
	require.NotContains(t, lines, "level=ERROR")
	require.Equal(t, map[string]any{}, e.session(c), "the logout did not end the session")
	_, err = r.refresh(tok.RefreshToken)
	requireGrantRefused(t, err)
	_, live = e.oidcTokens()
	require.Zero(t, live, "the application's tokens outlived the logout")
}

// TestOpenIDCodeReuseRacingItsExchange: a code exchanged twice at once —
// a stolen code raced against the application's own exchange — leaves no
// live token, whichever exchange wins: the loser's reuse revokes what the
// winner issued (RFC 6749 §4.1.2). The code was once marked exchanged in
// one transaction and its tokens written in another, so a reuse that came
// between them revoked a family with nothing in it yet, and the winner's
// tokens, written after, lived on. Here the winner's tokens wait (a test
// transaction holds the user's row, which their insert's foreign key
// check needs) while the second exchange comes. PostgreSQL: SQLite runs
// one writing transaction at a time, so nothing can come between.
func TestOpenIDCodeReuseRacingItsExchange(t *testing.T) {
	e := startOP(t, backend{name: "database", strategy: config.StrategyDatabase, postgres: true}, nil)
	r := e.relyingParty("tool", rpSecret, offline...)
	c := e.signedIn(ada)
	res, a := r.authorize(c)
	code := r.codeFrom(res, a)
	db := e.app.Store().DB()
	waiting := func() int64 {
		var n int64
		require.NoError(t, db.Raw("SELECT count(*) FROM pg_locks WHERE NOT granted").Scan(&n).Error)
		return n
	}

	release := holdLocks(t, db, "SELECT id FROM users WHERE email = '"+ada+"' FOR UPDATE")
	type result struct {
		tok *oauth2.Token
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() { tok, _, err := r.exchange(code, a); first <- result{tok, err} }()
	require.Eventually(t, func() bool { return waiting() > 0 }, 10*time.Second, 10*time.Millisecond, "the first exchange waits for its tokens' insert")
	go func() { tok, _, err := r.exchange(code, a); second <- result{tok, err} }()
	time.Sleep(500 * time.Millisecond) // the second exchange reaches the database
	release()

	won := <-first
	require.NoError(t, won.err, "the first exchange")
	lost := <-second
	requireGrantRefused(t, lost.err)
	require.Equal(t, http.StatusUnauthorized, r.userinfo(won.tok.AccessToken).StatusCode, "the winner's access token outlived the reuse")
	_, err := r.refresh(won.tok.RefreshToken)
	requireGrantRefused(t, err)
	_, live := e.oidcTokens()
	require.Zero(t, live)
}
