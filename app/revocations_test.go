package app_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// serveLoops runs a through Serve on a spare listener, for the loops Serve
// starts (the revocation poll, the purge); a test may still talk to its
// env's own server.
func serveLoops(t *testing.T, a *app.App) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()
	t.Cleanup(func() { stop(); require.NoError(t, <-done) })
}

// A revocation written to the database (as `latchkey sessions revoke`
// does) ends the user's session within session.revocation_poll, in both
// strategies: the next GET /session answers {} and clears the cookie.
// Another user's session stays; the revoked user signs in again
// afterwards; a revocation of everyone ends every session; and a new
// instance started on the database honours the revocations from its first
// request.
func TestRevocationEndsSessions(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy, config: func(c *config.Config) {
				c.Session.RevocationPoll = config.Duration(100 * time.Millisecond)
			}})
			serveLoops(t, e.app)
			ctx := context.Background()
			ann, bob := e.signInByEmail("ann@example.com"), e.signInByEmail("bob@example.com")
			_, annID := e.sessionUser(ann)
			require.NotEmpty(t, annID)

			e.clock.Add(time.Second)
			_, err := e.app.Store().RevokeSessions(ctx, annID, e.clock.Now())
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				addr, _ := e.sessionUser(ann)
				return addr == ""
			}, 5*time.Second, 20*time.Millisecond, "ann's session ends within the poll")
			_, ok := e.jarCookie(ann, "next-auth.session-token")
			require.False(t, ok, "and its cookie is cleared")
			addr, _ := e.sessionUser(bob)
			require.Equal(t, "bob@example.com", addr, "bob's session stays")

			e.clock.Add(time.Second)
			ann = e.signInByEmail("ann@example.com")
			addr, _ = e.sessionUser(ann)
			require.Equal(t, "ann@example.com", addr, "a sign-in after the revocation works")

			e.clock.Add(time.Second)
			_, err = e.app.Store().RevokeSessions(ctx, models.AllUsers, e.clock.Now())
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				a, _ := e.sessionUser(ann)
				b, _ := e.sessionUser(bob)
				return a == "" && b == ""
			}, 5*time.Second, 20*time.Millisecond, "revoking everyone ends every session")
		})
	}
}

// A session revoked before an instance starts is refused by it at once:
// New reads the revocations before the first request.
func TestRevocationsReadAtStart(t *testing.T) {
	e := startMail(t, envOpts{strategy: config.StrategyJWT})
	ann := e.signInByEmail("ann@example.com")
	_, annID := e.sessionUser(ann)
	e.clock.Add(time.Second)
	_, err := e.app.Store().RevokeSessions(context.Background(), annID, e.clock.Now())
	require.NoError(t, err)
	// This app never polls (Serve is not running); a new one on the same
	// database reads the table in New.
	a, err := app.New(e.cfg, app.Options{Logger: slog.New(slog.DiscardHandler), Now: e.clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	cookie, ok := e.jarCookie(ann, "next-auth.session-token")
	require.True(t, ok)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, e.path+"/session", nil)
	req.Header.Set("Cookie", "next-auth.session-token="+cookie)
	a.Handler().ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "{}", rec.Body.String())
	// The same cookie at the old app, which has not read the table since
	// it started, still works: what the poll is for.
	addr, _ := e.sessionUser(ann)
	require.Equal(t, "ann@example.com", addr)
}

// Serve's purge also deletes revocations that no session can outlive any
// more (older than max(max_age, absolute_max_age) + a day); newer ones stay.
func TestServePurgesOldRevocations(t *testing.T) {
	keep := 31 * 24 * time.Hour // the default 30 days, plus the day
	requirePurge(t, nil, -keep-time.Minute, -keep+time.Minute)
}

// With a password provider, a revocation also voids the password device
// cookies signed in before it, which live 30 days whatever the sessions'
// max_age: the purge keeps it that long (plus the day), or a revoked
// cookie would exempt again once its revocation was purged.
func TestServeKeepsRevocationsForDeviceCookies(t *testing.T) {
	requirePurge(t, func(cfg *config.Config) {
		cfg.Session.MaxAge = config.Duration(time.Hour)
		cfg.Session.AbsoluteMaxAge = config.Duration(time.Hour)
		cfg.Providers = append(cfg.Providers, config.Provider{Type: config.TypeCredentials, ID: "credentials"})
	}, -31*24*time.Hour-time.Minute, -2*24*time.Hour)
}

// requirePurge has Serve's purge, under the defaults changed by mutate,
// delete a revocation written gone before now and keep one written kept
// before now.
func requirePurge(t *testing.T, mutate func(*config.Config), gone, kept time.Duration) {
	cfg := config.Defaults()
	cfg.Secret = testSecret
	cfg.DataDir = t.TempDir()
	if mutate != nil {
		mutate(&cfg)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := &testClock{now: now}
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.DiscardHandler), Now: clock.Now, PurgeEvery: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() }) // after serveLoops has stopped Serve
	ctx := context.Background()
	_, err = a.Store().RevokeSessions(ctx, "old", now.Add(gone))
	require.NoError(t, err)
	_, err = a.Store().RevokeSessions(ctx, "recent", now.Add(kept))
	require.NoError(t, err)

	serveLoops(t, a)
	require.Eventually(t, func() bool {
		rows, err := a.Store().Revocations(ctx)
		return err == nil && len(rows) == 1 && rows[0].UserID == "recent"
	}, 5*time.Second, 10*time.Millisecond)
}

// The poll reads the revocation rows only when their digest changed: an
// unchanged table costs each poll two aggregate queries, not every row
// (at a million users that was 5.6 % of a core per idle instance, issue
// #36); a revocation written meanwhile is still read, and applied, within
// the poll.
func TestRevocationPollReadsRowsOnlyOnChange(t *testing.T) {
	e := startMail(t, envOpts{strategy: config.StrategyJWT, config: func(c *config.Config) {
		c.Session.RevocationPoll = config.Duration(100 * time.Millisecond)
	}})
	var reads atomic.Int64
	require.NoError(t, e.app.Store().DB().Callback().Query().After("gorm:query").Register("test:count_revocation_reads", func(db *gorm.DB) {
		if db.Statement.Table == "session_revocations" {
			reads.Add(1)
		}
	}))
	ctx := context.Background()
	_, err := e.app.Store().RevokeSessions(ctx, "someone-else", e.clock.Now().Add(-time.Hour))
	require.NoError(t, err)
	serveLoops(t, e.app)
	require.Eventually(t, func() bool { return reads.Load() == 1 }, 5*time.Second, 10*time.Millisecond, "the first poll reads the new row")
	time.Sleep(time.Second) // ~10 polls
	require.EqualValues(t, 1, reads.Load(), "polls of an unchanged table read no rows")

	ann := e.signInByEmail("ann@example.com")
	_, annID := e.sessionUser(ann)
	e.clock.Add(time.Second)
	_, err = e.app.Store().RevokeSessions(ctx, annID, e.clock.Now())
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		addr, _ := e.sessionUser(ann)
		return addr == ""
	}, 5*time.Second, 20*time.Millisecond, "a revocation is still applied within the poll")
	require.EqualValues(t, 2, reads.Load(), "read once more, for the change")
}
