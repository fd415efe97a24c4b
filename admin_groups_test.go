package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/groupstore"
)

// `users groups add|remove <email|id> <group>` and `users groups list
// [<email|id>]`, on SQLite and PostgreSQL: memberships added and removed
// once, a user's groups listed by source (a groups rule gives a verified
// address's domain its groups, an unverified one none), every group with
// its members; bad input is one line and exit 2, nothing to do exit 1, and
// no refusal changes anything.
func TestUsersGroups(t *testing.T) {
	eachAdminDatabase(t, "groups:\n  rules:\n    - domains: [example.com]\n      groups: [staff, everyone]\n", testUsersGroups)
}

func testUsersGroups(t *testing.T, cfgPath string, store *models.Store) {
	ctx := context.Background()
	now := time.Now()
	ann, bob := "ann@example.com", "bob@example.com"
	annU := &models.User{Email: &ann, EmailVerified: &now}
	bobU := &models.User{Email: &bob} // not verified: no rule's groups
	require.NoError(t, store.CreateUser(ctx, annU))
	require.NoError(t, store.CreateUser(ctx, bobU))
	annL, bobL := "user ann@example.com ("+annU.ID+")", "user bob@example.com ("+bobU.ID+")"

	g := func(args ...string) (int, string, string) {
		return runCmd(append([]string{"--config", cfgPath, "users", "groups"}, args...)...)
	}
	stored := func() string {
		var b strings.Builder
		for _, u := range []*models.User{annU, bobU} {
			names, err := groupstore.New(store).Groups(ctx, u.ID)
			require.NoError(t, err)
			b.WriteString(u.ID + ": " + strings.Join(names, ",") + "\n")
		}
		return b.String()
	}

	code, stdout, stderr := g("list", "ann@example.com")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, annL+": everyone, staff (by a groups rule for the verified address's domain)\n", stdout)
	code, stdout, _ = g("list", bobU.ID)
	require.Equal(t, 0, code)
	require.Equal(t, bobL+": no groups\n", stdout)

	code, stdout, stderr = g("add", "ANN@example.com", "ops:on-call")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "added "+annL+" to group ops:on-call; running instances see it within 5s\n", stdout)
	for _, u := range []string{"ann@example.com", "bob@example.com"} {
		code, _, stderr = g("add", u, "Admins")
		require.Equal(t, 0, code, stderr)
	}
	code, stdout, _ = g("list", "ann@example.com")
	require.Equal(t, 0, code)
	require.Equal(t, annL+": Admins, ops:on-call (added); everyone, staff (by a groups rule for the verified address's domain)\n", stdout)
	code, stdout, _ = g("list")
	require.Equal(t, 0, code)
	require.Equal(t, "GROUP        MEMBERS\nAdmins       2\nops:on-call  1\n2 groups with members added by an admin\n"+
		"groups rule: verified addresses @ example.com are in staff, everyone\n", stdout)

	// Bad input: one line, exit 2, nothing changed.
	before := stored()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "missing <add|remove|list>"},
		{[]string{"join", "ann@example.com", "x"}, `unknown groups command "join" (one of: add, remove, list)`},
		{[]string{"add", "ann@example.com"}, "groups add takes <email|id> <group>"},
		{[]string{"remove"}, "groups remove takes <email|id> <group>"},
		{[]string{"list", "ann@example.com", "x"}, "groups list takes [<email|id>]"},
		{[]string{"add", "ann@example.com", "a,b"}, `group "a,b": a group name must be 1 to 64 letters, digits, '.', '_', ':' or '-'`},
		{[]string{"add", "ann@example.com", strings.Repeat("g", 65)}, "a group name must be"},
		{[]string{"add", "nobody@example.com", "ops"}, `no user with id or e-mail address "nobody@example.com"`},
		{[]string{"list", " "}, "the user (<email|id>) is empty"},
		{[]string{"add", "ann@example.com", "ops", "more"}, "too many arguments"},
	} {
		code, stdout, stderr := g(c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.True(t, strings.HasPrefix(stderr, "latchkey: users groups: "), stderr)
		require.Contains(t, stderr, c.want)
	}
	require.Equal(t, before, stored())
	code, stdout, _ = g("--help")
	require.Equal(t, 0, code)
	require.Equal(t, "usage: latchkey [--config FILE] users groups <add|remove|list> [<email|id>] [<group>]\n", stdout)

	// Nothing to do: one line, exit 1, nothing changed.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "ann@example.com", "Admins"}, annL + " is in group Admins already; nothing changed"},
		{[]string{"remove", "bob@example.com", "ops:on-call"}, bobL + " was not added to group ops:on-call; nothing changed"},
		{[]string{"remove", "ann@example.com", "admins"}, annL + " was not added to group admins; nothing changed"},
		{[]string{"remove", "ann@example.com", "staff"}, "a groups rule of the configuration gives it to the user's verified domain: change the rule"},
	} {
		code, stdout, stderr := g(c.args...)
		require.Equal(t, 1, code, "%v: %s", c.args, stderr)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.Contains(t, stderr, c.want)
	}
	require.Equal(t, before, stored())

	code, stdout, stderr = g("remove", annU.ID, "Admins")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "removed "+annL+" from group Admins; running instances see it within 5s\n", stdout)
	require.Equal(t, annU.ID+": ops:on-call\n"+bobU.ID+": Admins\n", stored(), "only Ann's Admins went")
}
