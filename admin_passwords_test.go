package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/admin"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/models"
)

// `users create --password-stdin` reads the first line of standard input,
// applies the password policy, and stores a verified user whose password
// verifies; refusals change nothing.
func TestUsersCreateWithPassword(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "latchkey.db")
	t.Setenv("DATABASE_URL", db)
	cfg := writeFile(t, "port: 3000\n")
	code, _, stderr := runCmd("migrate")
	require.Equal(t, 0, code, stderr)

	create := func(stdin string, args ...string) (int, string, string) {
		f, err := os.CreateTemp(dir, "stdin")
		require.NoError(t, err)
		_, err = f.WriteString(stdin)
		require.NoError(t, err)
		_, err = f.Seek(0, 0)
		require.NoError(t, err)
		defer f.Close()
		var out, errOut syncBuffer
		code := admin.Run(loadConfig, cfg, append([]string{"users", "create"}, args...), f, &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, stdout, stderr := create("  my long pass phrase \n", " Ann@Example.com", "--password-stdin")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^created user ann@example.com \(\S+\), e-mail verified, with a password\n$`, stdout)

	store, err := models.Connect(models.Config{Dialect: models.DialectSQLite, DSN: db})
	require.NoError(t, err)
	defer store.Close()
	u, hash, err := store.UserAndPasswordByEmail(context.Background(), "ann@example.com")
	require.NoError(t, err)
	require.NotNil(t, u.EmailVerified)
	ok, _, err := password.Verify(hash, "  my long pass phrase ")
	require.NoError(t, err)
	require.True(t, ok, "spaces are part of the password; only the line end goes")

	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"another long one\n", []string{"ann@example.com", "--password-stdin"}, "exists already"},
		{"password1\n", []string{"bob@example.com", "--password-stdin"}, "commonly used"},
		{"short\n", []string{"bob@example.com", "--password-stdin"}, "at least 8 characters"},
		{"bob@example.com\n", []string{"bob@example.com", "--password-stdin"}, "must not be your e-mail address"},
		{"", []string{"bob@example.com", "--password-stdin"}, "no password on standard input"},
		{strings.Repeat("x", 1<<20), []string{"bob@example.com", "--password-stdin"}, "too long"},
		{"with\x00nul inside\n", []string{"bob@example.com", "--password-stdin"}, "NUL"},
		{"fine password\n", []string{"not-an-address", "--password-stdin"}, "is not an e-mail address"},
	} {
		code, stdout, stderr := create(c.stdin, c.args...)
		require.Equal(t, 1, code, c.want)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.Contains(t, stderr, c.want)
	}
	n, err := store.Count(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 1, n.Users, "refusals created nothing")

	// users show tells whether a password is set, never the hash.
	code, stdout, stderr = runCmd("--config", cfg, "users", "show", "ann@example.com")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^password:\s+set \d{4}-\d\d-\d\dT`, stdout)
	require.NotContains(t, stdout, "argon2id")

	// Without --password-stdin: a verified user without a password.
	code, stdout, stderr = create("", "carl@example.com")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "without a password")
	_, hash, err = store.UserAndPasswordByEmail(context.Background(), "carl@example.com")
	require.NoError(t, err)
	require.Empty(t, hash)
	code, stdout, _ = runCmd("--config", cfg, "users", "show", "carl@example.com")
	require.Equal(t, 0, code)
	require.NotContains(t, stdout, "password:")
}
