package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// A secret file that exists but is too short is an error, never silently
// replaced (which would end every session).
func TestEnsureSecretRefusesShortFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(path, []byte("short\n"), 0o600))
	cfg := config.Defaults()
	cfg.DataDir = dir
	require.ErrorContains(t, cfg.EnsureSecret(), "fewer than 32 characters")
	b, _ := os.ReadFile(path)
	require.Equal(t, "short\n", string(b), "the file is left alone")
}

// Under an https service URL an e-mail provider must have a server: links in
// a production log would be account keys. Over http it is a warning only.
func TestEmailWithoutServer(t *testing.T) {
	cfg := config.Defaults()
	cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail}}
	warnings, err := cfg.Validate(catalogue)
	require.NoError(t, err)
	require.Len(t, warnings, 1)

	cfg.ServiceURL = "https://auth.example.com/api/auth"
	_, err = cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "server is required when the service URL is https", "set server: smtp://")
}

func TestPagesRejectProtocolRelative(t *testing.T) {
	for _, v := range []string{"//evil.test/x", `/\evil.test`, "javascript:alert(1)", "login"} {
		cfg := config.Defaults()
		cfg.Pages.SignIn = v
		_, err := cfg.Validate(catalogue)
		requireProblem(t, problems(t, err), "pages.sign_in")
	}
	cfg := config.Defaults()
	cfg.Pages.SignIn, cfg.Pages.Error = "/login", "https://app.example.com/oops"
	_, err := cfg.Validate(catalogue)
	require.NoError(t, err)
}

// With no service URL anywhere, the base follows the port (PORT=8080 go run .).
func TestServiceURLFollowsPortWhenUnset(t *testing.T) {
	cfg, err := config.Load([]byte("service_url: \"\"\n"), env("PORT", "8080"))
	require.NoError(t, err)
	require.Equal(t, "http://localhost:8080/api/auth", cfg.ServiceURL)
	cfg, err = config.Load([]byte("service_url: \"\"\n"), env("PORT", "8080", "SERVICE_URL", "https://auth.example.com"))
	require.NoError(t, err)
	require.Equal(t, "https://auth.example.com", cfg.ServiceURL)
}

// A malformed SMTP server URL is reported with its userinfo replaced by ***,
// never with the password: check-config output and the start-up log are
// often pasted into tickets.
func TestMalformedServerHidesUserinfo(t *testing.T) {
	for _, server := range []string{
		"smtp://user:s3cr3t-pass@smtp.example.com:587%zz", // url.Parse fails and quotes the whole string
		"smtp:user:s3cr3t-pass@smtp.example.com",          // parses as an opaque URL: Redacted keeps it all
		"smtp://user:1234/s3cr3t-pass@smtp.example.com",   // parses as host "user", port 1234
		"smtp://s3cr3t-pass@smtp.example.com:99999",       // a token as the user name, bad port
		"smtp://user:s3cr3t-pass@smtp.example.com:0",      // parsed userinfo, bad port
	} {
		t.Run(server, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail, Server: server}}
			warnings, err := cfg.Validate(catalogue)
			p := problems(t, err)
			require.NotContains(t, p.Error()+strings.Join(warnings, "\n"), "s3cr3t-pass")
			requireProblem(t, p, "providers[0] (email)", "***@smtp.example.com")
		})
	}
}

// ?insecure=true on a remote relay is allowed but never quiet: check-config
// and the start-up log (both print these warnings) say that mail goes in
// plain text. On a loopback relay it changes nothing and says nothing.
func TestInsecureServerWarns(t *testing.T) {
	cfg := config.Defaults()
	cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail, Server: "smtp://relay.example.com:25?insecure=true"}}
	warnings, err := cfg.Validate(catalogue)
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "providers[0] (email)")
	require.Contains(t, warnings[0], "insecure=true")
	require.Contains(t, warnings[0], "plain text")

	cfg.Providers[0].Server = "smtp://mailer:s3cr3t-pass@relay.example.com:25?insecure=true"
	warnings, err = cfg.Validate(catalogue)
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "password", "says the credentials still need STARTTLS")
	require.NotContains(t, warnings[0], "s3cr3t-pass")

	for _, quiet := range []string{"smtp://127.0.0.1:25?insecure=true", "smtp://relay.example.com:587", "smtps://relay.example.com"} {
		cfg.Providers[0].Server = quiet
		warnings, err = cfg.Validate(catalogue)
		require.NoError(t, err, quiet)
		require.Empty(t, warnings, quiet)
	}
}

// Under an https service URL (production) a secret must be configured: a
// generated one lives in one data folder, so several instances, or one on
// an ephemeral disk, would each sign with their own and reject each
// other's cookies. Any of AUTH_SECRET, AUTH_SECRET_1..3 or secret: will do;
// over http a generated secret is still fine (development).
func TestGeneratedSecretRefusedForHTTPS(t *testing.T) {
	cfg := config.Defaults()
	cfg.ServiceURL = "https://auth.example.com/api/auth"
	_, err := cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "secret", "https", "AUTH_SECRET")

	for name, set := range map[string]func(*config.Config){
		"secret":        func(c *config.Config) { c.Secret = strings.Repeat("s", 32) },
		"AUTH_SECRET_1": func(c *config.Config) { c.RotationSecrets = []string{strings.Repeat("r", 32)} },
	} {
		c := cfg
		set(&c)
		_, err := c.Validate(catalogue)
		require.NoError(t, err, name)
	}

	cfg.ServiceURL = "http://localhost:3000/api/auth"
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err)
}

// The connection limits have working defaults, are read from the server:
// section, and nonsense is refused rather than taken as "unlimited".
func TestServerLimits(t *testing.T) {
	d := config.Defaults()
	require.Equal(t, 4096, d.Server.MaxConnections)
	require.Equal(t, 75*time.Second, d.Server.IdleTimeout.D())

	cfg, err := config.Load([]byte("server:\n  max_connections: 10\n  idle_timeout: 5s\n"), env())
	require.NoError(t, err)
	require.Equal(t, config.Server{MaxConnections: 10, IdleTimeout: config.Duration(5 * time.Second)}, cfg.Server)

	cfg.Server = config.Server{MaxConnections: 0, IdleTimeout: 0}
	p := problems(t, func() error { _, err := cfg.Validate(catalogue); return err }())
	requireProblem(t, p, "server.max_connections")
	requireProblem(t, p, "server.idle_timeout")
}
