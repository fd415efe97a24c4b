package multi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// Every instance runs the purge of expired rows on its own timer, so on a
// shared database they overlap. Two instances purging every few
// milliseconds while expired rows keep arriving: no purge fails (no
// deadlock, no serialization error), every expired row goes, the live
// session and link stay, and both instances keep answering.
//
// In-process: the purge interval (app.Options.PurgeEvery) has no flag or
// setting, on purpose (hourly is right in production), so two app.New on
// one database stand in for two processes.
func TestPurgeOnEveryInstanceAtOnce(t *testing.T) {
	dbURL := pgtest.NewDatabase(t, adminURL)
	ctx := context.Background()
	cfg := inProcessConfig(t, dbURL)
	var apps [2]*app.App
	var logs [2]*logBuffer
	var origins [2]string
	for i := range apps {
		apps[i], origins[i], logs[i] = servePurging(t, cfg, 5*time.Millisecond)
	}
	st := apps[0].Store()

	addr := "hal@example.com"
	u := &models.User{ID: models.NewID(), Email: &addr}
	require.NoError(t, st.CreateUser(ctx, u))
	now := time.Now()
	live := "live-session-token"
	require.NoError(t, st.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: session.HashToken(live), SignedIn: now, Expires: now.Add(time.Hour)}))
	require.NoError(t, st.CreateVerificationToken(ctx, addr, "live-link", now.Add(time.Hour)))

	db := sqlDB(t, dbURL)
	for round := range 8 {
		_, err := db.ExecContext(ctx, `INSERT INTO sessions (id, token_hash, user_id, expires, created_at)
			SELECT gen_random_uuid()::text, md5(random()::text) || md5(random()::text), $1, now() - interval '1 minute', now() - interval '1 hour'
			FROM generate_series(1, 300)`, u.ID)
		require.NoError(t, err, "round %d", round)
		_, err = db.ExecContext(ctx, `INSERT INTO verification_tokens (identifier, token_hash, expires)
			SELECT $1, md5(random()::text) || md5(random()::text), now() - interval '1 minute'
			FROM generate_series(1, 300)`, addr)
		require.NoError(t, err, "round %d", round)
		require.Eventually(t, func() bool {
			c, err := st.Count(ctx)
			return err == nil && c.Sessions == 1 && c.VerificationTokens == 1
		}, patience, 5*time.Millisecond, "round %d: the expired rows are purged", round)
	}

	_, err := st.SessionAndUser(ctx, session.HashToken(live))
	require.NoError(t, err, "the live session stays")
	links, err := st.VerificationTokensFor(ctx, addr)
	require.NoError(t, err)
	require.Len(t, links, 1, "the live link stays")
	for i, origin := range origins {
		req, err := http.NewRequest(http.MethodGet, origin+basePath+"/session", nil)
		require.NoError(t, err)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: live})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		require.NoError(t, err)
		var s map[string]any
		require.NoError(t, json.Unmarshal(body, &s), string(body))
		require.Equal(t, addr, userEmail(s), "instance %d answers", i)
	}
	for i := range logs {
		require.NotContains(t, logs[i].String(), "purge expired rows", "instance %d: no purge failed", i)
		t.Logf("instance %d purged rows %d times", i, strings.Count(logs[i].String(), "purged expired rows"))
	}
}

// inProcessConfig is the configuration of an in-process instance on the
// database at dbURL.
func inProcessConfig(t *testing.T, dbURL string) config.Config {
	t.Helper()
	cfg := config.Defaults()
	cfg.Secret = authSecret
	cfg.DataDir = t.TempDir()
	cfg.DatabaseURL = dbURL
	cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail, Server: "smtp://127.0.0.1:9"}}
	_, err := cfg.Validate(app.CatalogueExtra)
	require.NoError(t, err)
	return cfg
}

// servePurging runs an instance of cfg in this process, purging every
// `every`, on a loopback port until the test ends; it returns the
// instance, its origin and its log.
func servePurging(t *testing.T, cfg config.Config, every time.Duration) (*app.App, string, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), PurgeEvery: every})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-done)
		require.NoError(t, a.Close())
	})
	return a, "http://" + l.Addr().String(), logs
}
