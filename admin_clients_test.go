package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/admin"
	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/openidstore"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// `clients add|list|remove|rotate-secret|hash-secret`, on SQLite and
// PostgreSQL: a secret is printed once and stored as its SHA-256, the
// list never shows one, config.yaml's clients are listed and refused to
// the commands that change clients, and bad input is one line, exit 2,
// with nothing changed.
func TestAdminClients(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			clearEnv(t)
			t.Chdir(t.TempDir())
			if dialect == "sqlite" {
				t.Setenv("DATABASE_URL", filepath.Join(t.TempDir(), "latchkey.db"))
			} else {
				t.Setenv("DATABASE_URL", pgtest.NewDatabase(t, postgresURL))
			}
			testAdminClients(t)
		})
	}
}

var secretLine = regexp.MustCompile(`(?m)^client_secret: ([A-Za-z0-9_-]{43})$`)

func testAdminClients(t *testing.T) {
	cfgPath := writeFile(t, `oidc:
  enabled: true
  clients:
    - id: wiki
      name: Team Wiki
      secret_hash: sha256:`+strings.Repeat("ab", 32)+`
      redirect_uris: [https://wiki.example.com/callback]
`)
	code, _, stderr := runCmd("migrate")
	require.Equal(t, 0, code, stderr)
	cfg, _, err := loadConfig(cfgPath)
	require.NoError(t, err)
	store, err := models.Connect(app.StoreConfig(cfg))
	require.NoError(t, err)
	defer store.Close()
	ctx := context.Background()
	clients := func(args ...string) (int, string, string) {
		return runCmd(append([]string{"--config", cfgPath, "clients"}, args...)...)
	}
	stored := func() []openidstore.Client {
		rows, err := openidstore.New(store).Clients(ctx)
		require.NoError(t, err)
		return rows
	}

	// add: a confidential client, its secret printed once, stored hashed.
	code, stdout, stderr := clients("add", "grafana", "--name", "Grafana", "--redirect-uri", "https://grafana.example.com/login/generic_oauth",
		"--redirect-uri", "http://localhost:3001/login/generic_oauth", "--post-logout-uri", "https://grafana.example.com/", "--scope", "openid",
		"--scope", "groups", "--refresh-tokens")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.True(t, strings.HasPrefix(stdout, `added client "grafana" (Grafana): confidential, 2 redirect URIs`+"\n"), stdout)
	m := secretLine.FindStringSubmatch(stdout)
	require.Len(t, m, 2, stdout)
	secret := m[1]
	rows := stored()
	require.Len(t, rows, 1)
	sum := sha256.Sum256([]byte(secret))
	require.Equal(t, hex.EncodeToString(sum[:]), rows[0].SecretHash)
	require.Equal(t, "https://grafana.example.com/login/generic_oauth http://localhost:3001/login/generic_oauth", rows[0].RedirectURIs)
	require.Equal(t, "openid groups", rows[0].Scopes)
	require.True(t, rows[0].RefreshTokens)
	require.False(t, rows[0].Public)

	// A public first-party client: no secret.
	code, stdout, stderr = clients("add", "--public", "--first-party", "spa", "--name", "Dashboard", "--redirect-uri", "https://app.example.com/cb")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, `added client "spa" (Dashboard): public (no secret: it proves itself with PKCE), 1 redirect URI`+"\n", stdout)
	require.Len(t, stored(), 2)

	// list: config and stored, marked, no secret or hash.
	code, stdout, stderr = clients("list")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^wiki\s+Team Wiki\s+config\s+confidential\s+asked\s+offline_access\s+https://wiki.example.com/callback\s+openid profile email groups offline_access$`, stdout)
	require.Regexp(t, `(?m)^grafana\s+Grafana\s+stored\s+confidential\s+asked\s+always\s+https://grafana.example.com/login/generic_oauth http://localhost:3001/login/generic_oauth\s+openid groups$`, stdout)
	require.Regexp(t, `(?m)^spa\s+Dashboard\s+stored\s+public\s+first-party\s+`, stdout)
	require.True(t, strings.HasSuffix(stdout, "3 clients\n"))
	code, stdout, _ = clients("list", "--json")
	require.Equal(t, 0, code)
	var listed []admin.ClientJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &listed))
	require.Len(t, listed, 3)
	require.Equal(t, "config", listed[0].Source)
	require.Equal(t, []string{"https://grafana.example.com/"}, listed[1].PostLogoutRedirectURIs)
	for _, out := range []string{stdout} {
		require.NotContains(t, out, secret)
		require.NotContains(t, out, rows[0].SecretHash)
		require.NotContains(t, out, strings.Repeat("ab", 32))
		require.NotContains(t, strings.ToLower(out), "secret")
	}

	// rotate-secret: a new one, printed once; the previous one keeps
	// working for --keep-previous (24h by default), so that relying
	// parties can be redeployed, then only the new one does.
	clock := time.Now()
	rules, err := openid.New(openidstore.New(store), nil, openid.Settings{Algorithm: "RS256"}, []string{strings.Repeat("s", 32)},
		func() time.Time { return clock }, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	accepted := func(secret string) bool {
		return rules.AuthorizeClientIDSecret(ctx, "grafana", secret) == nil
	}
	require.True(t, accepted(secret))
	code, stdout, stderr = clients("rotate-secret", "grafana")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^client "grafana" has a new secret; the previous one keeps working until \S+Z \(--keep-previous 24h\), then only the new one\. The new one, shown only now:\n`, stdout)
	m = secretLine.FindStringSubmatch(stdout)
	require.Len(t, m, 2, stdout)
	require.NotEqual(t, secret, m[1])
	sum = sha256.Sum256([]byte(m[1]))
	require.Equal(t, hex.EncodeToString(sum[:]), stored()[0].SecretHash)
	require.True(t, accepted(m[1]), "the new secret")
	require.True(t, accepted(secret), "the previous secret, during its overlap")
	require.False(t, accepted("wrong"))
	clock = clock.Add(24*time.Hour - time.Minute)
	require.True(t, accepted(secret), "the previous secret, a minute before its end")
	clock = clock.Add(2 * time.Minute)
	require.False(t, accepted(secret), "the previous secret, after its end")
	require.True(t, accepted(m[1]))
	// --keep-previous 0 ends the previous secret at once (a leaked one).
	code, stdout, stderr = clients("rotate-secret", "--keep-previous", "0", "grafana")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(stdout, `client "grafana" has a new secret; the previous one stopped working. The new one, shown only now:`+"\n"), stdout)
	previous := m[1]
	m = secretLine.FindStringSubmatch(stdout)
	require.Len(t, m, 2, stdout)
	require.False(t, accepted(previous))
	require.True(t, accepted(m[1]))
	// A rotation during an overlap keeps only the secret it replaces (the
	// command's clock is the real one).
	clock = time.Now()
	code, stdout, _ = clients("rotate-secret", "--keep-previous", "1h", "grafana")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "(--keep-previous 1h)")
	second := m[1]
	m = secretLine.FindStringSubmatch(stdout)
	code, stdout, _ = clients("rotate-secret", "--keep-previous", "1d", "grafana")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "(--keep-previous 1d)")
	require.False(t, accepted(second), "two rotations back")
	require.True(t, accepted(m[1]), "the one replaced")
	replaced := m[1]
	m = secretLine.FindStringSubmatch(stdout)
	require.True(t, accepted(m[1]))
	kept := stored()[0].PreviousSecretUntil
	require.NotNil(t, kept)
	until := kept.UTC().Format(time.RFC3339)

	// list shows the overlap in force and until when (never the secret).
	code, stdout, stderr = clients("list")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "3 clients\n"+`client "grafana": its previous secret keeps working until `+until+
		" (`latchkey clients end-previous-secret grafana` ends it now)\n")
	require.Equal(t, 1, strings.Count(stdout, "previous secret"), "only grafana has one")
	code, stdout, _ = clients("list", "--json")
	require.Equal(t, 0, code)
	listed = nil
	require.NoError(t, json.Unmarshal([]byte(stdout), &listed))
	require.NotNil(t, listed[1].PreviousSecretUntil)
	require.Equal(t, until, listed[1].PreviousSecretUntil.Format(time.RFC3339))
	require.Nil(t, listed[0].PreviousSecretUntil, "a config.yaml client")
	require.Nil(t, listed[2].PreviousSecretUntil, "a public client")
	require.NotContains(t, stdout, stored()[0].PreviousSecretHash)

	// end-previous-secret ends it at once, after a confirmation.
	code, stdout, stderr = clients("end-previous-secret", "grafana")
	require.Equal(t, 1, code, stdout)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "not confirmed: standard input is not a terminal; pass --yes")
	require.True(t, accepted(replaced), "unconfirmed: still working")
	code, stdout, stderr = clients("end-previous-secret", "--yes", "grafana")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, `client "grafana": its previous secret stopped working (it would have until `+until+"); only the current one works\n", stdout)
	require.False(t, accepted(replaced), "the previous secret, ended")
	require.True(t, accepted(m[1]), "the current one")
	require.Empty(t, stored()[0].PreviousSecretHash)
	require.Nil(t, stored()[0].PreviousSecretUntil)
	code, stdout, _ = clients("list")
	require.Equal(t, 0, code)
	require.NotContains(t, stdout, "previous secret")
	// Again, or a client without one: nothing to end, nothing asked.
	for _, id := range []string{"grafana", "spa"} {
		code, stdout, stderr = clients("end-previous-secret", id)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, `client "`+id+`" has no previous secret in force; nothing changed`+"\n", stdout)
	}

	// Refusals: one line; nothing changed.
	before := stored()
	for _, c := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"add", "x", "--redirect-uri", "https://x.example.com/cb"}, 2, "give the client's name (--name)"},
		{[]string{"add", "x", "--name", "X"}, 2, "give at least one --redirect-uri"},
		{[]string{"add", "x", "--name", "X", "--redirect-uri", "http://x.example.com/cb"}, 2, `redirect_uris: "http://x.example.com/cb" uses http for a host other than loopback`},
		{[]string{"add", "x", "--name", "X", "--redirect-uri", "https://x.example.com/cb#f"}, 2, "must not have a fragment"},
		{[]string{"add", "x y", "--name", "X", "--redirect-uri", "https://x.example.com/cb"}, 2, "id must be 1-64 letters"},
		{[]string{"add", "x", "--name", "X", "--redirect-uri", "https://x.example.com/cb", "--scope", "admin"}, 2, `scopes: "admin" is not one of`},
		{[]string{"add", "grafana", "--name", "X", "--redirect-uri", "https://x.example.com/cb"}, 2, `a client "grafana" exists already; nothing changed`},
		{[]string{"add", "wiki", "--name", "X", "--redirect-uri", "https://x.example.com/cb"}, 1, `client "wiki" is defined in config.yaml (oidc.clients)`},
		{[]string{"add"}, 2, "missing <id>"},
		{[]string{"remove", "nope"}, 2, `no client "nope" among the stored ones`},
		{[]string{"remove", "wiki"}, 1, `client "wiki" is defined in config.yaml (oidc.clients): change or remove it there; nothing changed`},
		{[]string{"rotate-secret", "wiki"}, 1, `client "wiki" is defined in config.yaml`},
		{[]string{"rotate-secret", "nope"}, 2, `no client "nope"`},
		{[]string{"rotate-secret", "spa"}, 1, "a public client has no secret"},
		{[]string{"rotate-secret", "grafana", "--keep-previous", "-1h"}, 2, "--keep-previous -1h: a duration from 0 (end the previous secret at once) to 30d"},
		{[]string{"rotate-secret", "grafana", "--keep-previous", "31d"}, 2, "--keep-previous 31d: a duration from 0"},
		{[]string{"rotate-secret", "grafana", "--keep-previous", "soon"}, 2, "--keep-previous soon: a duration from 0"},
		{[]string{"end-previous-secret", "wiki"}, 1, `client "wiki" is defined in config.yaml`},
		{[]string{"end-previous-secret", "nope"}, 2, `no client "nope"`},
		{[]string{"end-previous-secret"}, 2, "missing <id>"},
		{[]string{"list", "extra"}, 2, "too many arguments"},
		{[]string{"rename", "x"}, 2, `unknown command "rename" (one of: clients add, clients list, clients remove, clients rotate-secret, clients end-previous-secret, clients hash-secret)`},
	} {
		code, stdout, stderr := clients(c.args...)
		require.Equal(t, c.exit, code, "%v: %s", c.args, stderr)
		require.Empty(t, stdout, c.args)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.Contains(t, stderr, c.want, c.args)
	}
	require.Equal(t, before, stored())
	code, stdout, _ = clients("add", "--help")
	require.Equal(t, 0, code)
	require.Equal(t, "usage: latchkey [--config FILE] clients add [--first-party] --name <name> [--post-logout-uri <uri>]... [--public] "+
		"--redirect-uri <uri> [--redirect-uri <uri>]... [--refresh-tokens] [--scope <scope>]... <id>\n", stdout)

	// remove: the client with its consents and tokens.
	addr := "ann@example.com"
	ann := &models.User{Email: &addr}
	require.NoError(t, store.CreateUser(ctx, ann))
	require.NoError(t, openidstore.New(store).SaveConsent(ctx, ann.ID, "spa", "openid", time.Now()))
	// Without a terminal to confirm on, it needs --yes and changes nothing.
	code, stdout, stderr = clients("remove", "spa")
	require.Equal(t, 1, code, stdout)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "not confirmed: standard input is not a terminal; pass --yes")
	require.Len(t, stored(), 2)
	consents, err := openidstore.New(store).Consents(ctx, ann.ID)
	require.NoError(t, err)
	require.Len(t, consents, 1)
	code, stdout, stderr = clients("remove", "spa", "--yes")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, `removed client "spa" with its consents and tokens: its users' tokens stop working at once`+"\n", stdout)
	require.Len(t, stored(), 1)
	consents, err = openidstore.New(store).Consents(ctx, ann.ID)
	require.NoError(t, err)
	require.Empty(t, consents)

	// With the provider off the commands work, and say it is off.
	off := writeFile(t, "oidc:\n  enabled: false\n")
	code, stdout, stderr = runCmd("--config", off, "clients", "list")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "note: oidc.enabled is false: this takes effect when the OpenID Provider is turned on\n", stderr)
	require.Contains(t, stdout, "grafana")
}

// hash-secret reads the first line of standard input and prints
// config.yaml's secret_hash, with no configuration or database; a short
// or missing secret is refused.
func TestAdminClientsHashSecret(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	hash := func(stdin string, args ...string) (int, string, string) {
		f, err := os.CreateTemp(t.TempDir(), "stdin")
		require.NoError(t, err)
		_, err = f.WriteString(stdin)
		require.NoError(t, err)
		_, err = f.Seek(0, 0)
		require.NoError(t, err)
		defer f.Close()
		var out, errOut syncBuffer
		code := admin.Run(loadConfig, "", append([]string{"clients", "hash-secret"}, args...), f, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	secret := "a-long-client-secret-0123456789abcdef"
	sum := sha256.Sum256([]byte(secret))
	code, stdout, stderr := hash(secret + "\nignored\n")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "sha256:"+hex.EncodeToString(sum[:])+"\n", stdout)
	code, stdout, _ = hash(secret) // no line end
	require.Equal(t, 0, code)
	require.Equal(t, "sha256:"+hex.EncodeToString(sum[:])+"\n", stdout)
	// The hash is one config.yaml accepts.
	p := writeFile(t, "oidc:\n  enabled: true\n  clients:\n    - id: a\n      secret_hash: "+strings.TrimSpace(stdout)+"\n      redirect_uris: [https://a.example.com/cb]\n")
	code, stdout, stderr = runCmd("--config", p, "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "OpenID Provider: issuer http://localhost:3000/api/auth (discovery http://localhost:3000/api/auth/.well-known/openid-configuration), 1 client in config.yaml, ID tokens signed RS256\n")

	for _, c := range []struct{ stdin, want string }{
		{"", "no secret on standard input (its first line is the secret)"},
		{"\n", "no secret on standard input (its first line is the secret)"},
		{"short\n", "secret too short (5 characters); use at least 32"},
	} {
		code, stdout, stderr := hash(c.stdin)
		require.Equal(t, 2, code)
		require.Empty(t, stdout)
		require.Equal(t, "latchkey: clients hash-secret: "+c.want+"\n", stderr)
	}
}
