package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// `users two-factor status|reset|forget-devices`, on SQLite and
// PostgreSQL: the status line, a reset that removes the secret, the
// recovery codes, the pending second steps and (with the device key) the
// remembered browsers, and forgetting browsers alone; bad input is one
// line and exit 2, a user without two-factor exit 1, and no refusal
// changes anything.
func TestUsersTwoFactor(t *testing.T) {
	eachAdminDatabase(t, "two_factor:\n  mode: optional\n", testUsersTwoFactor)
}

func testUsersTwoFactor(t *testing.T, cfgPath string, store *models.Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)

	users := map[string]*models.User{}
	for _, addr := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} {
		u := &models.User{Email: &addr}
		require.NoError(t, store.CreateUser(ctx, u))
		users[addr] = u
	}
	ann, bob, cy := users["ann@example.com"], users["bob@example.com"], users["cy@example.com"]
	// Ann and Bob have two-factor on, Ann with a backoff in force and a
	// pending second step; Cy began an enrolment and never confirmed it.
	for _, u := range []*models.User{ann, bob} {
		require.NoError(t, twofactorstore.New(store).BeginTwoFactor(ctx, u.ID, "sealed-secret", "key-"+u.ID, now))
		ok, err := twofactorstore.New(store).ConfirmTwoFactor(ctx, u.ID, "sealed-secret", "sealed-secret", now.Unix()/30, []string{"h1" + u.ID, "h2" + u.ID, "h3" + u.ID}, now)
		require.NoError(t, err)
		require.True(t, ok)
	}
	codes, err := twofactorstore.New(store).UnusedRecoveryCodes(ctx, ann.ID)
	require.NoError(t, err)
	ok, err := twofactorstore.New(store).UseRecoveryCode(ctx, ann.ID, codes[0].ID, now)
	require.NoError(t, err)
	require.True(t, ok)
	past := time.Now().Add(-2 * time.Hour)
	for i := range 6 { // six wrong codes: the fifth's block is over, the sixth's lasts an hour
		at := past
		if i == 5 {
			at = time.Now()
		}
		_, ok, err := twofactorstore.New(store).ReserveTwoFactorCheck(ctx, ann.ID, at, 5, at.Add(time.Hour))
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.NoError(t, twofactorstore.New(store).CreateSecondStep(ctx, &twofactorstore.SecondStep{TokenHash: strings.Repeat("a", 64), UserID: ann.ID,
		Provider: "credentials", Methods: "pwd", Expires: now.Add(5 * time.Minute), CreatedAt: now}))
	require.NoError(t, twofactorstore.New(store).BeginTwoFactor(ctx, cy.ID, "sealed-secret", "key-cy", now))

	tf := func(args ...string) (int, string, string) {
		return runCmd(append([]string{"--config", cfgPath, "users", "two-factor"}, args...)...)
	}
	// snapshot is what the commands could change, to prove a refusal
	// changed nothing.
	snapshot := func() string {
		var b strings.Builder
		for _, u := range []*models.User{ann, bob, cy} {
			row, err := twofactorstore.New(store).TwoFactorOf(ctx, u.ID)
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", u.ID, err)
				continue
			}
			left, err := twofactorstore.New(store).UnusedRecoveryCodes(ctx, u.ID)
			require.NoError(t, err)
			fmt.Fprintf(&b, "%s: %s %v %d %d %d\n", u.ID, row.DeviceKey, row.ConfirmedAt != nil, row.Failures, row.LastStep, len(left))
		}
		_, err := twofactorstore.New(store).SecondStepByHash(ctx, strings.Repeat("a", 64))
		fmt.Fprintf(&b, "step: %v\n", err)
		return b.String()
	}

	// status: one line each.
	code, stdout, stderr := tf("status", "ANN@example.com")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^user ann@example.com \(`+ann.ID+`\): two-factor on since `+now.Format("2006-01-02T15:04:05Z")+
		`, 2 recovery codes left, codes refused until \d{4}-\d\d-\d\dT[\d:]+Z \(backoff after 6 wrong codes\)\n$`, stdout)
	require.Empty(t, stderr)
	code, stdout, _ = tf("status", bob.ID)
	require.Equal(t, 0, code)
	require.Equal(t, "user bob@example.com ("+bob.ID+"): two-factor on since "+stamp(now)+", 3 recovery codes left\n", stdout)
	code, stdout, _ = tf("status", "cy@example.com")
	require.Equal(t, 0, code)
	require.Equal(t, "user cy@example.com ("+cy.ID+"): two-factor off (an enrolment begun "+stamp(now)+", not confirmed)\n", stdout)

	// Bad input: one line, exit 2, nothing changed.
	before := snapshot()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "missing <status|reset|forget-devices> <email|id>"},
		{[]string{"status"}, "missing <email|id>"},
		{[]string{"disable", "ann@example.com"}, `unknown two-factor command "disable" (one of: status, reset, forget-devices)`},
		{[]string{"reset", "nobody@example.com"}, `no user with id or e-mail address "nobody@example.com"`},
		{[]string{"reset", " "}, "the user (<email|id>) is empty"},
		{[]string{"reset", "ann@example.com", "bob@example.com"}, "too many arguments"},
		{[]string{"status", "--now", "ann@example.com"}, "flag provided but not defined: -now"},
	} {
		code, stdout, stderr := tf(c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.True(t, strings.HasPrefix(stderr, "latchkey: users two-factor: "), stderr)
		require.Contains(t, stderr, c.want)
	}
	require.Equal(t, before, snapshot())
	code, stdout, _ = tf("--help")
	require.Equal(t, 0, code)
	require.Equal(t, "usage: latchkey [--config FILE] users two-factor [--yes] <status|reset|forget-devices> <email|id>\n", stdout)

	// forget-devices: a new device key, nothing else.
	code, stdout, stderr = tf("forget-devices", "ann@example.com")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "forgot every remembered browser of user ann@example.com ("+ann.ID+"): each asks for a code again\n", stdout)
	row, err := twofactorstore.New(store).TwoFactorOf(ctx, ann.ID)
	require.NoError(t, err)
	require.NotEqual(t, "key-"+ann.ID, row.DeviceKey)
	require.NotEmpty(t, row.DeviceKey)
	require.NotNil(t, row.ConfirmedAt, "still on")

	// reset asks first: without a terminal to confirm on, it needs --yes
	// and changes nothing.
	before = snapshot()
	code, stdout, stderr = tf("reset", ann.ID)
	require.Equal(t, 1, code, stderr)
	require.Empty(t, stdout)
	require.Equal(t, "latchkey: users two-factor: not confirmed: standard input is not a terminal; pass --yes to go ahead without asking\n", stderr)
	require.Equal(t, before, snapshot())

	// reset: everything of Ann's two-factor goes, Bob's stays.
	code, stdout, stderr = tf("reset", ann.ID, "--yes")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "removed two-factor of user ann@example.com ("+ann.ID+"): its secret, 2 unused recovery codes, its pending second steps and its remembered browsers; its sessions stay (`sessions revoke --user` ends them)\n", stdout)
	_, err = twofactorstore.New(store).TwoFactorOf(ctx, ann.ID)
	require.ErrorIs(t, err, models.ErrNotFound)
	left, err := twofactorstore.New(store).UnusedRecoveryCodes(ctx, ann.ID)
	require.NoError(t, err)
	require.Empty(t, left)
	_, err = twofactorstore.New(store).SecondStepByHash(ctx, strings.Repeat("a", 64))
	require.ErrorIs(t, err, models.ErrNotFound)
	code, stdout, _ = tf("status", "ann@example.com")
	require.Equal(t, 0, code)
	require.Equal(t, "user ann@example.com ("+ann.ID+"): two-factor off\n", stdout)
	code, stdout, _ = tf("status", "bob@example.com")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "two-factor on since", "another user's two-factor stays")

	// Nothing to do: one line, exit 1, nothing changed.
	before = snapshot()
	for _, args := range [][]string{{"reset", "ann@example.com"}, {"reset", "--yes", "ann@example.com"}, {"forget-devices", "ann@example.com"}} {
		code, stdout, stderr := tf(args...)
		require.Equal(t, 1, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		require.Contains(t, stderr, "has no two-factor")
		require.Contains(t, stderr, "nothing changed")
	}
	require.Equal(t, before, snapshot())

	// An unconfirmed enrolment can be reset too.
	code, stdout, _ = tf("reset", "--yes", "cy@example.com")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "removed the unconfirmed two-factor enrolment of user cy@example.com")

	// With two_factor.mode off the status says no code is asked for.
	off := writeFile(t, "port: 3000\n")
	code, stdout, _ = runCmd("--config", off, "users", "two-factor", "status", "bob@example.com")
	require.Equal(t, 0, code)
	require.True(t, strings.HasSuffix(stdout, "; two_factor.mode is off, so no code is asked for\n"), stdout)
}
