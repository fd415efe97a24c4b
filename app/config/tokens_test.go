package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// tokens: and store_tokens load from the file, the client secret from the
// environment (or its file), and every mistake is reported at once.
func TestTokensConfig(t *testing.T) {
	d := config.Defaults()
	require.Equal(t, time.Minute, d.Tokens.RefreshSkew.D())
	require.Equal(t, 15*time.Second, d.Tokens.RefreshWait.D())
	require.False(t, d.StoresTokens())

	file := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(file, []byte("from-a-file-0123456789abcdef0123456789\n"), 0o600))
	cfg, err := config.Load([]byte(`
providers:
  - id: github
    client_id: x
    client_secret: y
    store_tokens: true
tokens:
  refresh_skew: 30s
`), env("TOKENS_CLIENT_SECRET_FILE", file))
	require.NoError(t, err)
	require.True(t, cfg.StoresTokens())
	require.Equal(t, "from-a-file-0123456789abcdef0123456789", cfg.Tokens.ClientSecret)
	require.Equal(t, 30*time.Second, cfg.Tokens.RefreshSkew.D())
	cfg, err = config.Load(nil, env("TOKENS_CLIENT_SECRET", "from-the-environment-0123456789abcdef"))
	require.NoError(t, err)
	require.Equal(t, "from-the-environment-0123456789abcdef", cfg.Tokens.ClientSecret)

	bad := config.Defaults()
	bad.Secret = "0123456789abcdef0123456789abcdef"
	bad.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail, StoreTokens: true}}
	bad.Tokens = config.Tokens{ClientSecret: "short", RefreshSkew: config.Duration(-time.Second), RefreshWait: config.Duration(time.Hour)}
	_, err = bad.Validate(catalogue)
	require.Error(t, err)
	for _, want := range []string{
		"tokens.client_secret: too short", "tokens.refresh_skew: -1s must be between 0 and 1h",
		"tokens.refresh_wait: 1h0m0s must be between 1s and 5m", "providers[0] (email): store_tokens is for oauth and oidc providers only",
	} {
		require.ErrorContains(t, err, want)
	}
}
