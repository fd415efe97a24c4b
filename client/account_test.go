package client_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/client"
	"github.com/latchkey-auth/latchkey/models"
)

// A real latchkey (database sessions, SQLite) with one user who has two
// sessions and a linked identity; returns its base URL and the sessions'
// cookie tokens.
func startLatchkey(t *testing.T) (base string, tokens []string) {
	t.Helper()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Secret = secret
	cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail, Server: "smtp://127.0.0.1:9"}}
	srv := httptest.NewUnstartedServer(nil)
	cfg.ServiceURL = "http://" + srv.Listener.Addr().String() + "/api/auth"
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(srv.Close)

	ctx := context.Background()
	addr, label := "ada@example.com", "ada-gh"
	u := &models.User{ID: models.NewID(), Email: &addr}
	require.NoError(t, a.Store().CreateUser(ctx, u))
	require.NoError(t, a.Store().LinkAccount(ctx, &models.Account{ID: models.NewID(), UserID: u.ID, Type: "oauth",
		Provider: "github", ProviderAccountID: "42", Label: &label}))
	for i := range 2 {
		tok := models.NewID()
		require.NoError(t, a.Store().CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: session.HashToken(tok),
			Device: "Firefox 128 on Linux", Network: "203.0.113.0/24",
			SignedIn: time.Now().Add(-time.Duration(i) * time.Minute), Expires: time.Now().Add(time.Hour)}))
		tokens = append(tokens, tok)
	}
	return cfg.ServiceURL, tokens
}

func TestRemoteListsSessionsAndAccounts(t *testing.T) {
	base, tokens := startLatchkey(t)
	rm, err := client.NewRemote(client.RemoteOptions{URL: base})
	require.NoError(t, err)
	r := requestWith(t, "theme=dark; next-auth.session-token="+tokens[0])
	ctx := context.Background()

	sessions, err := rm.ListSessions(ctx, r)
	require.NoError(t, err)
	require.Len(t, sessions, 2)
	current := 0
	for _, s := range sessions {
		require.NotEmpty(t, s.ID)
		require.Equal(t, "Firefox 128 on Linux", s.Device)
		require.Equal(t, "203.0.113.0/24", s.Network)
		require.WithinDuration(t, time.Now(), s.CreatedAt, 5*time.Minute)
		require.False(t, s.LastSeenAt.IsZero())
		if s.Current {
			current++
		}
	}
	require.Equal(t, 1, current, "the request's own session is marked")

	accounts, err := rm.ListAccounts(ctx, r)
	require.NoError(t, err)
	require.Len(t, accounts, 1)
	require.Equal(t, "github", accounts[0].Provider)
	require.Equal(t, "github", accounts[0].Name, "a provider no longer configured is named by its id")
	require.Equal(t, "ada-gh", accounts[0].Label)
	require.NotEmpty(t, accounts[0].ID)

	// Signed out: no cookie (no request), or one latchkey refuses.
	_, err = rm.ListSessions(ctx, requestWith(t, "theme=dark"))
	require.ErrorIs(t, err, client.ErrSignedOut)
	_, err = rm.ListAccounts(ctx, requestWith(t, "next-auth.session-token=forged"))
	require.ErrorIs(t, err, client.ErrSignedOut)
}

// latchkey unreachable: an error, not "signed out".
func TestRemoteListsFailClosed(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	rm, err := client.NewRemote(client.RemoteOptions{URL: down.URL + "/api/auth", Timeout: time.Second})
	require.NoError(t, err)
	_, err = rm.ListSessions(context.Background(), requestWith(t, "next-auth.session-token=x"))
	require.Error(t, err)
	require.NotErrorIs(t, err, client.ErrSignedOut)
}
