package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/test/testport"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// clearEnv unsets (empties) every variable latchkey reads, for this test.
func clearEnv(t *testing.T) {
	for _, k := range []string{"SERVICE_URL", "AUTH_URL", "NEXTAUTH_URL", "AUTH_SECRET", "NEXTAUTH_SECRET",
		"AUTH_SECRET_FILE", "AUTH_SECRET_1", "AUTH_SECRET_2", "AUTH_SECRET_3", "PORT", "DATABASE_URL", "LOG_LEVEL", "AUTH_GITHUB_ID", "AUTH_GITHUB_SECRET"} {
		t.Setenv(k, "")
	}
}

// syncBuffer is a bytes.Buffer safe for the server's log goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errOut syncBuffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestCheckConfigDefault(t *testing.T) {
	clearEnv(t)
	// ./config.yaml (the shipped defaults) is read from the working directory.
	code, stdout, stderr := runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "configuration OK")
	require.NotContains(t, stderr, "error:")

	// Elsewhere, the embedded defaults.
	t.Chdir(t.TempDir())
	code, stdout, stderr = runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "configuration OK")
}

// An unknown LOG_LEVEL is a warning, not silence: the lines asked for
// would never come.
func TestCheckConfigWarnsOfAnUnknownLogLevel(t *testing.T) {
	clearEnv(t)
	t.Setenv("LOG_LEVEL", "trace")
	code, stdout, stderr := runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `warning: LOG_LEVEL: "trace" is none of debug, info, warn, error: logging at info`)
	t.Setenv("LOG_LEVEL", "DEBUG")
	_, stdout, _ = runCmd("check-config")
	require.NotContains(t, stdout, "LOG_LEVEL")
}

// TestCheckConfigCountsSecrets: check-config tells how many secrets are
// active for rotation, and never prints one.
func TestCheckConfigCountsSecrets(t *testing.T) {
	clearEnv(t)
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	t.Setenv("AUTH_SECRET", a)
	t.Setenv("AUTH_SECRET_1", b)
	code, stdout, stderr := runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "secrets: 2 active")
	require.NotContains(t, stdout+stderr, a)
	require.NotContains(t, stdout+stderr, b)

	t.Setenv("AUTH_SECRET_2", "short")
	code, _, stderr = runCmd("check-config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "too short")
}

func TestCheckConfigListsEveryProblem(t *testing.T) {
	clearEnv(t)
	t.Setenv("PORT", "eighty")
	path := writeFile(t, `service_url: ftp://example.com
prot: 3000
secret: short
session:
  strategy: cookie
  max_age: 30x
providers:
  - id: nosuch
  - id: github
  - id: sso
    type: oidc
    client_id: x
    client_secret: y
`)
	code, stdout, stderr := runCmd("--config", path, "check-config")
	require.Equal(t, 1, code)
	require.NotContains(t, stdout, "configuration OK")
	var errs []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		require.True(t, strings.HasPrefix(line, "error: "), line)
		errs = append(errs, line)
	}
	for _, want := range []string{
		`line 2: unknown key "prot"`,
		`line 6: invalid duration "30x"`,
		"PORT",
		"service_url",
		"secret: too short",
		"session.strategy",
		"(nosuch)",
		"(github): client_id is missing",
		"(github): client_secret is missing",
		"(sso): issuer",
	} {
		require.Contains(t, stderr, want)
	}
	require.Len(t, errs, 10, stderr)
}

func TestCheckConfigEnvFallbacks(t *testing.T) {
	clearEnv(t)
	path := writeFile(t, "providers:\n  - id: github\n")
	code, _, stderr := runCmd("--config", path, "check-config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "AUTH_GITHUB_ID")
	t.Setenv("AUTH_GITHUB_ID", "id")
	t.Setenv("AUTH_GITHUB_SECRET", "secret")
	code, stdout, stderr := runCmd("--config", path, "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "configuration OK")
}

// An in-memory DATABASE_URL would give each pooled connection its own
// database: check-config lists it, and serve refuses to start without
// creating any file.
func TestCheckConfigRefusesInMemoryDatabase(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)
	for _, u := range []string{":memory:", "file::memory:?cache=shared", "sqlite://:memory:", "file:l.db?mode=memory"} {
		stderr := requireDatabaseURLRefused(t, u, `error: database_url (DATABASE_URL) "`+u+`": an in-memory database is not supported`)
		require.Contains(t, stderr, "in-memory database is not supported", u)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was created")
}

// requireDatabaseURLRefused sets DATABASE_URL to u and requires
// check-config to refuse it with want, and serve not to start; it returns
// serve's standard error.
func requireDatabaseURLRefused(t *testing.T, u, want string) string {
	t.Helper()
	t.Setenv("DATABASE_URL", u)
	code, stdout, stderr := runCmd("check-config")
	require.Equal(t, 1, code, u)
	require.NotContains(t, stdout, "configuration OK")
	require.Contains(t, stderr, want, u)
	code, _, serveErr := runCmd()
	require.Equal(t, 1, code, u)
	return stdout + stderr + serveErr
}

// A DATABASE_URL with a scheme that is neither PostgreSQL's (as pgx
// spells it: lower case) nor SQLite's is refused, its password not
// repeated: it was taken for a SQLite file name, and latchkey ran on an
// empty SQLite database in folders named after the URL, password and all,
// instead of the PostgreSQL database the operator meant.
func TestCheckConfigRefusesUnknownDatabaseScheme(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)
	for _, u := range []string{"Postgres://latchkey:hunter2pw@db.internal/latchkey", "POSTGRESQL://latchkey:hunter2pw@db/latchkey",
		"postgress://latchkey:hunter2pw@db/latchkey", "mysql://latchkey:hunter2pw@db/latchkey"} {
		out := requireDatabaseURLRefused(t, u, "is neither postgres:// nor a SQLite file")
		require.Contains(t, out, "error: database_url (DATABASE_URL)", u)
		code, _, stderr := runCmd("migrate")
		require.Equal(t, 1, code, u)
		require.NotContains(t, out+stderr, "hunter2pw", u)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was created")
}

func TestCheckConfigUnreadable(t *testing.T) {
	clearEnv(t)
	code, _, stderr := runCmd("--config", filepath.Join(t.TempDir(), "missing.yaml"), "check-config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "read config")
	code, _, stderr = runCmd("--config", writeFile(t, "port: [1\n"), "check-config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "line")
}

func TestProvidersCommand(t *testing.T) {
	code, stdout, stderr := runCmd("providers")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Greater(t, len(lines), 20, "the goth catalogue")
	ids := map[string]string{}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		require.GreaterOrEqual(t, len(f), 2, l)
		require.Regexp(t, `^[a-z0-9][a-z0-9_-]*$`, f[0])
		ids[f[0]] = f[1]
	}
	require.Equal(t, "GitHub", ids["github"])
	require.Contains(t, ids, "google")
}

func TestUsageErrors(t *testing.T) {
	code, _, stderr := runCmd("frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "unknown command")
	require.Contains(t, stderr, "Usage")
	code, _, _ = runCmd("--no-such-flag")
	require.Equal(t, 2, code)
}

func TestServeRefusesBadConfig(t *testing.T) {
	clearEnv(t)
	code, _, stderr := runCmd("--config", writeFile(t, "session:\n  strategy: cookie\n"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "check-config")
}

func freePort(t *testing.T) int {
	t.Helper()
	return testport.MustFree(t)
}

// serveOnce runs the service with no configuration in dir, waits until it
// answers, and stops it with SIGTERM as a process manager would.
func serveOnce(t *testing.T) (csrf string, logs string) {
	t.Helper()
	return serveUntil(t, syscall.SIGTERM)
}

// serveUntil runs the service with no configuration, waits for /csrf, then
// stops it with sig and expects a clean exit.
func serveUntil(t *testing.T, sig syscall.Signal) (csrf string, logs string) {
	t.Helper()
	return serveDuring(t, sig, nil)
}

// serveDuring is serveUntil, calling during (when not nil) with the port
// while the service answers, before it is stopped.
func serveDuring(t *testing.T, sig syscall.Signal, during func(port int)) (csrf string, logs string) {
	t.Helper()
	port := freePort(t)
	t.Setenv("PORT", fmt.Sprint(port))
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(nil, &out, &errOut) }()

	url := fmt.Sprintf("http://127.0.0.1:%d/api/auth/csrf", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case code := <-done:
			t.Fatalf("run returned %d early: %s", code, errOut.String())
		default:
		}
		res, err := http.Get(url)
		if err == nil {
			var body map[string]string
			require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
			csrf = body["csrfToken"]
			break
		}
		require.True(t, time.Now().Before(deadline), "service did not start: %s", errOut.String())
		time.Sleep(20 * time.Millisecond)
	}
	if during != nil {
		during(port)
	}
	require.NoError(t, syscall.Kill(os.Getpid(), sig))
	select {
	case code := <-done:
		require.Equal(t, 0, code, errOut.String())
	case <-time.After(15 * time.Second):
		t.Fatalf("service did not stop on %v", sig)
	}
	return csrf, errOut.String()
}

func TestServeWithNoConfiguration(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)

	csrf, logs := serveOnce(t)
	require.Len(t, csrf, 64)
	require.Contains(t, logs, "latchkey listening")
	require.Equal(t, 1, strings.Count(logs, "no AUTH_SECRET set"), "a generated secret is announced once")
	require.Contains(t, logs, "latchkey stopped")

	secretPath := filepath.Join(dir, "data", "secret")
	st, err := os.Stat(secretPath)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	secret, err := os.ReadFile(secretPath)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "data", "latchkey.db"))
	require.NoError(t, err, "SQLite in ./data")

	// A restart (stopped with SIGINT this time) reuses the generated secret.
	_, logs = serveUntil(t, syscall.SIGINT)
	require.Contains(t, logs, "latchkey stopped")
	again, err := os.ReadFile(secretPath)
	require.NoError(t, err)
	require.Equal(t, secret, again)
}

// Flags after the command count too: `check-config --config FILE` checks
// FILE, never the built-in config.
func TestFlagsAfterCommand(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("nonsense_key: 1\n"), 0o600))
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"check-config", "--config", bad}, &out, &errOut))
	require.Contains(t, errOut.String(), "nonsense_key")
	errOut.Reset()
	require.Equal(t, 2, run([]string{"check-config", "extra"}, &out, &errOut))
	require.Contains(t, errOut.String(), `unexpected argument "extra"`)
}

// A malformed SMTP server URL never shows its password, neither in
// check-config nor in the log of a start-up it stops.
func TestMalformedSMTPServerHidesPassword(t *testing.T) {
	clearEnv(t)
	for _, server := range []string{
		`smtp://user:s3cr3t-pass@smtp.example.com:587%zz`,
		`smtp:user:s3cr3t-pass@smtp.example.com`,
		`smtp://user:1234/s3cr3t-pass@smtp.example.com`,
		`smtp://s3cr3t-pass@smtp.example.com:99999`,
	} {
		t.Run(server, func(t *testing.T) {
			path := writeFile(t, "providers:\n  - id: email\n    type: email\n    server: \""+server+"\"\n")
			code, stdout, stderr := runCmd("--config", path, "check-config")
			require.Equal(t, 1, code, stdout)
			require.NotContains(t, stdout+stderr, "s3cr3t-pass")
			require.Contains(t, stderr, "error: providers[0] (email): ")
			require.Contains(t, stderr, "***@smtp.example.com")

			code, stdout, stderr = runCmd("--config", path)
			require.Equal(t, 1, code)
			require.NotContains(t, stdout+stderr, "s3cr3t-pass")
			require.Contains(t, stderr, "did not start")
		})
	}
}

// ?insecure=true is announced by check-config, and once in the start-up log.
func TestInsecureSMTPServerWarnsOnce(t *testing.T) {
	clearEnv(t)
	config := "providers:\n  - id: email\n    type: email\n    server: smtp://relay.example.com:25?insecure=true\n"
	code, stdout, stderr := runCmd("--config", writeFile(t, config), "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "warning: providers[0] (email): ")
	require.Contains(t, stdout, "insecure=true")
	require.Contains(t, stdout, "configuration OK")

	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o600))
	_, logs := serveOnce(t)
	require.Equal(t, 1, strings.Count(logs, "insecure=true"), logs)
}

// With an https SERVICE_URL and no secret, check-config lists the problem and
// serve refuses to start, before generating anything: every instance (or
// every restart on an ephemeral disk) would otherwise sign with its own
// secret. Any rotation secret counts as a secret.
func TestHTTPSRequiresASecret(t *testing.T) {
	clearEnv(t)
	for _, k := range []string{"AUTH_SECRET_1", "AUTH_SECRET_2", "AUTH_SECRET_3"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("SERVICE_URL", "https://auth.example.com/api/auth")
	path := writeFile(t, "providers:\n  - id: email\n    type: email\n    server: smtp://relay.example.com:587\n")

	code, stdout, stderr := runCmd("--config", path, "check-config")
	require.Equal(t, 1, code, stdout)
	require.Contains(t, stderr, "error: secret: ")
	require.Contains(t, stderr, "AUTH_SECRET")
	require.NotContains(t, stdout, "configuration OK")

	code, _, stderr = runCmd("--config", path)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "AUTH_SECRET")
	require.Contains(t, stderr, "did not start")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no secret was generated")

	t.Setenv("AUTH_SECRET_2", strings.Repeat("k", 32))
	code, stdout, stderr = runCmd("--config", path, "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "configuration OK")
}

// postgresURL is the admin URL of the PostgreSQL server these tests share.
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }

// TestMigrateCommandPostgres: an operator migrates before deploying:
// status lists the pending steps, migrate applies them, check-config sees
// the schema.
func TestMigrateCommandPostgres(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", pgtest.NewDatabase(t, postgresURL))
	latest := fmt.Sprint(models.SchemaVersion())

	code, stdout, stderr := runCmd("migrate", "status")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "postgres schema: version 0 of "+latest)
	require.Equal(t, len(models.Versions()), strings.Count(stdout, "pending: "))

	code, stdout, stderr = runCmd("migrate")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "postgres schema: version "+latest+" of "+latest)
	require.NotContains(t, stdout, "pending")

	code, stdout, stderr = runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "database: postgres answers, schema version "+latest+" of "+latest)
}

// TestCheckConfigBadPostgresURL: one clear problem, never the password.
func TestCheckConfigBadPostgresURL(t *testing.T) {
	clearEnv(t)
	t.Setenv("DATABASE_URL", "postgres://latchkey:s3cr3t-pw@db.example.com:notaport/latchkey")
	code, stdout, stderr := runCmd("check-config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "not a valid PostgreSQL connection string")
	require.NotContains(t, stdout+stderr, "s3cr3t-pw")
}

// TestCheckConfigMultiHostPostgres: a cluster that fails over is named by
// several hosts; check-config accepts the URL, reaches whichever host is
// the primary (the first here has nothing listening), never prints the
// password, and warns when target_session_attrs=read-write is missing.
func TestCheckConfigMultiHostPostgres(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	u, err := url.Parse(pgtest.NewDatabase(t, postgresURL))
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), "s3cr3t-pw")
	u.Host = fmt.Sprintf("127.0.0.1:%d,%s", freePort(t), u.Host)
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	u.RawQuery = q.Encode()
	t.Setenv("DATABASE_URL", u.String())
	code, stdout, stderr := runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "database: postgres answers")
	require.Contains(t, stdout, "configuration OK")
	require.NotContains(t, stdout, "target_session_attrs")
	require.NotContains(t, stdout+stderr, "s3cr3t-pw")

	// Without target_session_attrs, a warning; nothing answering, a warning
	// naming the URL, password masked.
	q.Del("target_session_attrs")
	u.RawQuery = q.Encode()
	u.Host = fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d", freePort(t), freePort(t))
	t.Setenv("DATABASE_URL", u.String())
	code, stdout, stderr = runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "warning: database_url (DATABASE_URL) names 2 hosts without target_session_attrs=read-write")
	require.Contains(t, stdout, "does not answer from here")
	require.Contains(t, stdout, ":***@127.0.0.1:")
	require.NotContains(t, stdout+stderr, "s3cr3t-pw")

	// The key=value form, password and all.
	t.Setenv("DATABASE_URL", fmt.Sprintf("host=127.0.0.1,127.0.0.1 port=%d,%d dbname=latchkey user=latchkey password = 's3cr3t-pw' target_session_attrs=standby",
		freePort(t), freePort(t)))
	code, stdout, stderr = runCmd("check-config")
	require.Equal(t, 1, code, stdout)
	require.Contains(t, stderr, "password=***")
	require.Contains(t, stderr, "connects to a standby")
	require.NotContains(t, stdout+stderr, "s3cr3t-pw")
}

// TestServeOnPostgres: the service starts on PostgreSQL, migrating it.
func TestServeOnPostgres(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", pgtest.NewDatabase(t, postgresURL))
	csrf, logs := serveOnce(t)
	require.Len(t, csrf, 64)
	require.Contains(t, logs, "latchkey stopped")
	_, err := os.Stat("data/latchkey.db")
	require.True(t, os.IsNotExist(err), "no SQLite file when PostgreSQL is configured")
}

// TestMigrateListsConfigProblems: migrate with a broken configuration says
// what is wrong, as check-config does, and touches no database.
func TestMigrateListsConfigProblems(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", ":memory:")
	code, _, stderr := runCmd("migrate")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "error: database_url (DATABASE_URL)")
	require.Contains(t, stderr, "in-memory")
}

// TestCheckConfigLanguages: check-config lists the offered languages and
// refuses a language without a catalogue, or a malformed tag.
func TestCheckConfigLanguages(t *testing.T) {
	clearEnv(t)
	code, stdout, stderr := runCmd("--config", writeFile(t, "i18n:\n  default: fr\n  languages: [fr, ar, ja]\n"), "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "languages: fr (Français, default), ar (العربية), ja (日本語)")

	code, stdout, stderr = runCmd("--config", writeFile(t, "i18n:\n  languages: [de, fr]\n"), "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "languages: de (Deutsch, default), fr (Français)")

	code, _, stderr = runCmd("--config", writeFile(t, "i18n:\n  languages: [en, sv]\n"), "check-config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `error: i18n.languages: "sv" has no catalogue`)

	code, _, stderr = runCmd("--config", writeFile(t, "i18n:\n  default: \"<b>\"\n  languages: [en]\n"), "check-config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `error: i18n.default: "<b>" is not a language tag`)
	require.Contains(t, stderr, `error: i18n.default: "<b>" is not in i18n.languages`)
}

// TestCheckConfigAccessSummary: with access rules, check-config says that
// a host no rule names is refused (it admitted every signed-in user before
// issue 26), so an upgrade that relied on it is told.
func TestCheckConfigAccessSummary(t *testing.T) {
	clearEnv(t)
	path := writeFile(t, `access:
  - hosts: [admin.example.com]
    emails: [root@example.com]
  - hosts: [wiki.example.com]
    anyone: true
`)
	code, stdout, stderr := runCmd("--config", path, "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "access: 2 rules; a host no rule names is refused (403")
	require.Contains(t, stdout, "configuration OK")

	require.NotContains(t, stdout, "does not verify e-mail")

	// Beside a provider that does not verify addresses, a warning (issue 26 M2);
	// github verifies, and trust_email vouches for the other.
	t.Setenv("AUTH_GITHUB_ID", "id")
	t.Setenv("AUTH_GITHUB_SECRET", "secret")
	providers := `providers:
  - id: github
  - id: gitea
    client_id: x
    client_secret: y
`
	rules := `access:
  - hosts: [admin.example.com]
    emails: [root@example.com]
`
	code, stdout, stderr = runCmd("--config", writeFile(t, providers+rules), "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `warning: access: provider "gitea" does not verify e-mail addresses`)
	require.NotContains(t, stdout, `provider "github"`)
	code, stdout, stderr = runCmd("--config", writeFile(t, strings.Replace(providers, "client_secret: y", "client_secret: y\n    trust_email: true", 1)+rules), "check-config")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stdout, "does not verify e-mail")
	code, stdout, stderr = runCmd("--config", writeFile(t, providers), "check-config")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stdout, "does not verify e-mail", "no rules, no warning")
	groupRules := "groups:\n  rules:\n    - domains: [example.com]\n      groups: [staff]\n"
	code, stdout, stderr = runCmd("--config", writeFile(t, providers+groupRules), "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `warning: access: provider "gitea" does not verify e-mail addresses`, "groups rules go by verified domain too")
	require.Contains(t, stdout, "groups rules give them no groups")

	code, stdout, stderr = runCmd("--config", writeFile(t, "port: 3000\n"), "check-config")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stdout, "access:")
}

// stamp is a time as the admin commands print it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// A YAML merge key (<<) does not hide a typo: the keys it merges in are
// checked as if written in place, once each, so a misspelt security
// setting in an anchored block is refused like any other.
func TestCheckConfigUnknownKeyInMerge(t *testing.T) {
	clearEnv(t)
	path := writeFile(t, `<<: {trusted_proxiez: [10.0.0.0/8]}
session: &s
  strategy: jwt
cookies:
  <<: [*s, {secure: true}]
providers:
  - &gh
    id: github
    client_id: a
    client_secret: b
    alow_dangerous_email_account_linking: true
  - <<: *gh
    id: gitlab
`)
	code, stdout, stderr := runCmd("--config", path, "check-config")
	require.Equal(t, 1, code, stdout)
	require.NotContains(t, stdout, "configuration OK")
	for _, want := range []string{
		`line 1: unknown key "trusted_proxiez" in the top level`,
		`line 3: unknown key "strategy" in cookies`,
		`line 5: unknown key "secure" in cookies`,
		`line 11: unknown key "alow_dangerous_email_account_linking" in a provider`,
	} {
		require.Contains(t, stderr, want)
	}
	require.Equal(t, 1, strings.Count(stderr, "alow_dangerous"), "a merged block's typo is listed once:\n%s", stderr)
}
