package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// The admin commands' command line, in process on a SQLite file: flags
// before or after the arguments and the command, --help, and a database
// whose schema is not this binary's (never migrated by an admin command).
func TestAdminCommandLine(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "latchkey.db")
	t.Setenv("DATABASE_URL", db)
	cfg := writeFile(t, "port: 3000\n")

	code, stdout, stderr := runCmd("users", "list")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, fmt.Sprintf("latchkey: users list: the database schema is at version 0, this latchkey needs %d: run this latchkey's `migrate` first (or the matching latchkey)\n", models.SchemaVersion()), stderr)

	code, _, stderr = runCmd("migrate")
	require.Equal(t, 0, code, stderr)
	for _, args := range [][]string{
		{"--config", cfg, "users", "list"},
		{"users", "list", "--config", cfg},
		{"users", "--config", cfg, "list"}, // not a verb: refused
	} {
		code, stdout, stderr = runCmd(args...)
		if args[1] == "--config" {
			require.Equal(t, 2, code)
			require.Equal(t, `latchkey: users: unknown command "--config" (one of: users list, users show, users delete, users create, users two-factor, users groups)`+"\n", stderr)
			continue
		}
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "ID  EMAIL  NAME  CREATED  ACCOUNTS  SESSIONS\n0 users\n", stdout)
	}

	code, stdout, _ = runCmd("sessions", "revoke", "--help")
	require.Equal(t, 0, code)
	require.Equal(t, "usage: latchkey [--config FILE] sessions revoke [--all] [--user <email|id>] [--yes]\n", stdout)

	// Flags after a positional argument, and "--" before one that looks like a flag.
	code, _, stderr = runCmd("users", "delete", "--", "--yes")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `no user with id or e-mail address "--yes"`)
	code, _, stderr = runCmd("accounts", "unlink", "nobody@example.com", "--bogus", "idp")
	require.Equal(t, 2, code)
	require.Equal(t, 1, strings.Count(stderr, "\n"))
	require.Contains(t, stderr, "flag provided but not defined: -bogus")

	code, _, stderr = runCmd("--config", filepath.Join(dir, "missing.yaml"), "users", "list")
	require.Equal(t, 1, code)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "latchkey: users list: invalid configuration: read config:")
}

// `accounts unlink` removes one identity linked to the user and
// `accounts unlink-all` every one, and only that user's, each after a
// confirmation (--yes in a script).
func TestAccountsUnlinkAll(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "latchkey.db")
	t.Setenv("DATABASE_URL", db)
	code, _, stderr := runCmd("migrate")
	require.Equal(t, 0, code, stderr)
	store, err := models.Connect(models.Config{Dialect: models.DialectSQLite, DSN: db})
	require.NoError(t, err)
	defer store.Close()
	ctx := context.Background()
	ann, bob := "ann@example.com", "bob@example.com"
	users := map[string]*models.User{}
	for _, addr := range []string{ann, bob} {
		u := &models.User{Email: &addr}
		require.NoError(t, store.CreateUser(ctx, u))
		users[addr] = u
		for _, p := range []string{"github", "google"} {
			require.NoError(t, store.LinkAccount(ctx, &models.Account{UserID: u.ID, Type: "oauth", Provider: p, ProviderAccountID: addr}))
		}
	}

	linked := func(addr string) int {
		left, err := store.AccountsOf(ctx, users[addr].ID)
		require.NoError(t, err)
		return len(left)
	}
	// Without a terminal to confirm on, neither unlinks without --yes.
	for _, args := range [][]string{{"unlink", bob, "google"}, {"unlink-all", ann}} {
		code, stdout, stderr := runCmd(append([]string{"accounts"}, args...)...)
		require.Equal(t, 1, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, "latchkey: accounts "+args[0]+": not confirmed: standard input is not a terminal; pass --yes to go ahead without asking\n", stderr)
	}
	require.Equal(t, 2, linked(ann))
	require.Equal(t, 2, linked(bob))
	// A provider the user is not linked to is refused before asking.
	code, _, stderr = runCmd("accounts", "unlink", bob, "gitlab")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `has no account at provider "gitlab" (linked: github, google); nothing changed`)
	code, stdout, stderr := runCmd("accounts", "unlink", bob, "google", "--yes")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "unlinked 1 account at \"google\" from user bob@example.com ("+users[bob].ID+"); 1 account left\n", stdout)
	require.Equal(t, 1, linked(bob))

	code, stdout, stderr = runCmd("accounts", "unlink-all", ann, "--yes")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "unlinked 2 accounts (github, google) from user ann@example.com ("+users[ann].ID+"); its sessions stay (`sessions revoke --user` ends them)\n", stdout)
	require.Equal(t, 0, linked(ann))
	left, err := store.AccountsOf(ctx, users[bob].ID)
	require.NoError(t, err)
	require.Len(t, left, 1, "another user's links stay")

	code, _, stderr = runCmd("accounts", "unlink-all", ann, "--yes")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "has no linked accounts; nothing changed")
}

// eachAdminDatabase runs f on SQLite and on PostgreSQL: DATABASE_URL names
// a fresh database, migrated by `latchkey migrate`; cfgPath is a config
// file of cfgYAML and store a connection to the database, for setting up
// rows and checking what a command changed.
func eachAdminDatabase(t *testing.T, cfgYAML string, f func(t *testing.T, cfgPath string, store *models.Store)) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			clearEnv(t)
			t.Chdir(t.TempDir())
			if dialect == "sqlite" {
				t.Setenv("DATABASE_URL", filepath.Join(t.TempDir(), "latchkey.db"))
			} else {
				t.Setenv("DATABASE_URL", pgtest.NewDatabase(t, postgresURL))
			}
			cfgPath := writeFile(t, cfgYAML)
			code, _, stderr := runCmd("migrate")
			require.Equal(t, 0, code, stderr)
			cfg, _, err := loadConfig(cfgPath)
			require.NoError(t, err)
			store, err := models.Connect(app.StoreConfig(cfg))
			require.NoError(t, err)
			defer store.Close()
			f(t, cfgPath, store)
		})
	}
}
