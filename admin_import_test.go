package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// `latchkey import next-auth` as an operator runs it: on a fresh latchkey
// database (migrated by the command), a next-auth SQLite file comes in
// with the summary's lines; the second run imports nothing; a file that is
// no next-auth database is refused (exit 1) naming what it lacks; a
// missing --from is a usage error (exit 2).
func TestAdminImportNextAuth(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", filepath.Join(t.TempDir(), "latchkey.db"))
	from := filepath.Join(t.TempDir(), "next-auth.db")
	db, err := sql.Open("sqlite3", from)
	require.NoError(t, err)
	for _, q := range []string{
		`CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT, email TEXT UNIQUE, "emailVerified" TEXT, image TEXT)`,
		`CREATE TABLE accounts (id TEXT PRIMARY KEY, "userId" TEXT, type TEXT, provider TEXT, "providerAccountId" TEXT, access_token TEXT)`,
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, "userId" TEXT, expires TEXT, "sessionToken" TEXT UNIQUE)`,
		`CREATE TABLE verification_token (identifier TEXT, expires TEXT, token TEXT, PRIMARY KEY (identifier, token))`,
		`INSERT INTO users VALUES ('u1', 'Ann', 'ann@example.com', '2026-01-01T00:00:00.000Z', NULL), ('u2', 'Ann 2', 'Ann@Example.com', NULL, NULL)`,
		`INSERT INTO accounts VALUES ('a1', 'u1', 'oauth', 'github', '1', 'gho_x')`,
		`INSERT INTO sessions VALUES ('s1', 'u1', '2999-01-01T00:00:00.000Z', 'cookie-1'), ('s2', 'u1', '2000-01-01T00:00:00.000Z', 'cookie-2')`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	code, stdout, stderr := runCmd("import", "next-auth", "--from", from, "--dry-run")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "(schema: sql, dry run: nothing written)\nusers: 2 read, 1 imported, 0 already there, 1 skipped\n")

	code, stdout, stderr = runCmd("import", "next-auth", "--from", "sqlite:"+from)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "next-auth import from sqlite:"+from+" (schema: sql)\n"+
		"users: 2 read, 1 imported, 0 already there, 1 skipped\n"+
		"accounts: 1 read, 1 imported, 0 already there, 0 skipped\n"+
		"sessions: 2 read, 1 imported, 0 already there, 1 skipped\n"+
		"verification tokens: 0 read, 0 imported, 0 already there, 0 skipped\n"+
		"provider tokens: not kept for 1 account (their providers have no store_tokens: users sign in again at the provider when an app needs one)\n"+
		"providers not in latchkey's configuration: github (1) (their accounts came in; add the providers with the same ids to sign in with them)\n"+
		"skipped:\n"+
		"  users u2: its e-mail is user u1's but for case (latchkey's e-mails are case-insensitive)\n"+
		"  sessions: 1 expired\n", stdout)
	require.Contains(t, stderr, "import: users: 2 read")
	require.NotContains(t, stdout+stderr, "cookie-1", "no session token is printed")

	code, stdout, _ = runCmd("import", "next-auth", "--from", from)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "users: 2 read, 0 imported, 1 already there, 1 skipped\n")
	code, stdout, _ = runCmd("users", "list")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "u1  ann@example.com")

	other := filepath.Join(t.TempDir(), "other.db")
	db, err = sql.Open("sqlite3", other)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE users (id TEXT)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	code, _, stderr = runCmd("import", "next-auth", "--from", other)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `not a next-auth database this import knows`)
	require.Contains(t, stderr, `no table "accounts", "sessions", "verification_token"`)

	code, _, stderr = runCmd("import", "next-auth")
	require.Equal(t, 2, code)
	require.True(t, strings.Contains(stderr, "--from (or --from-env) is required"), stderr)

	// A URL of a scheme the import does not read (Postgres:// in capitals,
	// a typo, another database) is a usage error that never repeats the
	// password it carries: it was taken for a SQLite file's name and
	// printed whole, twice, in "no SQLite file ...".
	for _, from := range []string{"Postgres://next:hunter2pw@db/next", "mysql://next:hunter2pw@db/next"} {
		code, stdout, stderr = runCmd("import", "next-auth", "--from", from, "--dry-run")
		require.Equal(t, 2, code, from)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.Contains(t, stderr, "--from: the scheme", from)
		require.NotContains(t, stderr, "hunter2pw", from)
	}

	// --from-env NAME keeps the URL, and its password, off the command
	// line (ps, shell history): it is read from the variable NAME, else
	// from the file NAME_FILE names, as AUTH_SECRET_FILE.
	code, stdout, _ = runCmd("import", "next-auth", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "[--from-env <NAME>]")
	t.Setenv("NEXTAUTH_DB", from)
	code, stdout, stderr = runCmd("import", "next-auth", "--from-env", "NEXTAUTH_DB", "--dry-run")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "next-auth import from sqlite:"+from+" (schema: sql, dry run: nothing written)\nusers: 2 read, 0 imported, 1 already there, 1 skipped\n")
	t.Setenv("NEXTAUTH_DB", "")
	t.Setenv("NEXTAUTH_DB_FILE", writeFile(t, "sqlite:"+from+"\n"))
	code, stdout, stderr = runCmd("import", "next-auth", "--from-env", "NEXTAUTH_DB", "--dry-run")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "users: 2 read, 0 imported, 1 already there, 1 skipped\n")
	// The password is never repeated, in a refusal or a failed connection.
	t.Setenv("NEXTAUTH_DB_FILE", "")
	t.Setenv("NEXTAUTH_DB", "postgres://next:hunter2pw@127.0.0.1:1/next?connect_timeout=5")
	code, stdout, stderr = runCmd("import", "next-auth", "--from-env", "NEXTAUTH_DB", "--dry-run")
	require.Equal(t, 1, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "connect to postgres://next:xxxxx@127.0.0.1:1/next")
	require.NotContains(t, stderr, "hunter2pw")
	require.NotContains(t, stderr, "warning")
	// Nor the passphrase of the client certificate's key (libpq's sslpassword).
	t.Setenv("NEXTAUTH_DB", "postgres://next@127.0.0.1:1/next?connect_timeout=5&sslmode=disable&sslpassword=hunter2pw")
	code, _, stderr = runCmd("import", "next-auth", "--from-env", "NEXTAUTH_DB", "--dry-run")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "sslpassword=xxxxx")
	require.NotContains(t, stderr, "hunter2pw")
	// Nor in a URL the PostgreSQL driver refuses to read: its message
	// repeated the URL with only a password before the host masked.
	for _, q := range []string{"password=hunter2pw&sslmode=bogus", "sslpassword=hunter2pw&connect_timeout=soon"} {
		t.Setenv("NEXTAUTH_DB", "postgres://next@127.0.0.1:1/next?"+q)
		code, _, stderr = runCmd("import", "next-auth", "--from-env", "NEXTAUTH_DB", "--dry-run")
		require.Equal(t, 1, code, stderr)
		require.Contains(t, stderr, "--from postgres://next@127.0.0.1:1/next?", q)
		require.NotContains(t, stderr, "hunter2pw", q)
	}
	t.Setenv("NEXTAUTH_DB", "postgres://next:hunter2pw@127.0.0.1:1/next?connect_timeout=5")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-env", "NEXTAUTH_DB", "--from", from}, "give either --from or --from-env, not both"},
		{[]string{"--from-env", "NO_SUCH_VAR"}, "--from-env: NO_SUCH_VAR (or NO_SUCH_VAR_FILE) is unset or empty"},
		{[]string{"--from-env", "NEXTAUTH DB"}, `--from-env: "NEXTAUTH DB" is not an environment variable's name`},
	} {
		code, stdout, stderr = runCmd(append([]string{"import", "next-auth", "--dry-run"}, c.args...)...)
		require.Equal(t, 2, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.Contains(t, stderr, c.want)
		require.NotContains(t, stderr, "hunter2pw")
	}
	// A password given with --from works, with a warning saying how to
	// keep it off the command line.
	code, _, stderr = runCmd("import", "next-auth", "--dry-run", "--from", "postgres://next:hunter2pw@127.0.0.1:1/next?connect_timeout=5")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "latchkey: import next-auth: warning: --from carries a password, which other users see in `ps` and your shell keeps in its history: use --from-env NAME")
	require.NotContains(t, stderr, "hunter2pw")
}
