package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// `accounts tokens` lists which provider tokens a user's accounts hold and
// their expiry, and the refresh mark; never a token.
func TestAccountsTokens(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "latchkey.db")
	t.Setenv("DATABASE_URL", db)
	cfg := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("providers:\n  - id: github\n    client_id: x\n    client_secret: y\n    store_tokens: true\n"), 0o600))
	code, _, stderr := runCmd("migrate")
	require.Equal(t, 0, code, stderr)
	store, err := models.Connect(models.Config{Dialect: models.DialectSQLite, DSN: db})
	require.NoError(t, err)
	defer store.Close()
	ctx := context.Background()
	addr := "ann@example.com"
	u := &models.User{Email: &addr}
	require.NoError(t, store.CreateUser(ctx, u))
	at, rt, exp := "lk1:sealed-access", "lk1:sealed-refresh", time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).Unix()
	require.NoError(t, store.LinkAccount(ctx, &models.Account{UserID: u.ID, Type: "oauth", Provider: "github", ProviderAccountID: "1", AccessToken: &at, RefreshToken: &rt, ExpiresAt: &exp}))
	require.NoError(t, store.LinkAccount(ctx, &models.Account{UserID: u.ID, Type: "oidc", Provider: "idp", ProviderAccountID: "2"}))
	require.NoError(t, store.DB().Exec("UPDATE accounts SET token_error = 'RefreshAccessTokenError' WHERE provider = 'github'").Error)

	code, stdout, stderr := runCmd("--config", cfg, "accounts", "tokens", addr)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	require.Regexp(t, `^github\s+yes\s+yes\s+yes\s+no\s+2030-01-02T03:04:05Z\s+RefreshAccessTokenError: the user must sign in with it again$`, lines[1])
	require.Regexp(t, `^idp\s+no\s+no\s+no\s+no\s+-\s+no token kept$`, lines[2])
	require.NotContains(t, stdout, "sealed")

	code, stdout, stderr = runCmd("--config", cfg, "accounts", "tokens", addr, "--json")
	require.Equal(t, 0, code, stderr)
	var out []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	require.Len(t, out, 2)
	require.Equal(t, map[string]any{"provider": "github", "storeTokens": true, "accessToken": true, "refreshToken": true, "idToken": false,
		"expiresAt": "2030-01-02T03:04:05Z", "error": "RefreshAccessTokenError"}, out[0])
	require.NotContains(t, stdout, "sealed")
}
