package app_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// Serve purges expired sessions and verification tokens on its own, at
// start and then every PurgeEvery; live rows stay.
func TestServePurgesExpiredRows(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Defaults()
	cfg.Secret = testSecret
	cfg.DataDir = dir
	cfg.DatabaseURL = filepath.Join(dir, "purge.db")
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := &testClock{now: now}
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.DiscardHandler), Now: clock.Now, PurgeEvery: 20 * time.Millisecond})
	require.NoError(t, err)
	defer a.Close()

	ctx := context.Background()
	st := a.Store()
	email := "p@example.com"
	u := &models.User{ID: models.NewID(), Email: &email}
	require.NoError(t, st.CreateUser(ctx, u))
	require.NoError(t, st.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: "live", SignedIn: now, Expires: now.Add(time.Hour)}))
	require.NoError(t, st.CreateVerificationToken(ctx, email, "live-token", now.Add(time.Hour)))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Serve(sctx, l) }()
	defer func() { stop(); require.NoError(t, <-done) }()

	// Rows that expire while the server runs are removed by a later tick.
	require.NoError(t, st.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: "old", SignedIn: now.Add(-time.Hour), Expires: now.Add(-time.Second)}))
	require.NoError(t, st.CreateVerificationToken(ctx, email, "old-token", now.Add(-time.Second)))
	require.Eventually(t, func() bool {
		c, err := st.Count(ctx)
		return err == nil && c.Sessions == 1 && c.VerificationTokens == 1
	}, 5*time.Second, 10*time.Millisecond)
	_, err = st.SessionAndUser(ctx, "live")
	require.NoError(t, err, "the live session stays")
}
