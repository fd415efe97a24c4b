package multi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// What runs in the background goes on by itself across a database outage
// (a restart, a fail-over): the revocation poll, the purge, and an
// instance's start-up. Each failure is logged once per outage, not per
// tick, and once more when the work resumes.

// The revocation poll meets a stopped database: it says so once (not at
// every poll), keeps the revocations it read (a session revoked before
// the outage stays ended through it), says "resumed" once the database is
// back, and then sees a revocation made after the restart, without a
// restart of latchkey.
func TestRevocationPollThroughDatabaseRestart(t *testing.T) {
	pg := ownServer(t)
	c := startCluster(t, clusterOpts{instances: 1, adminURL: pg.AdminURL,
		extraConfig: "session:\n  strategy: jwt\n  revocation_poll: " + poll.String() + "\n"})
	a := c.nodes[0]
	ann, bob := c.browser(), c.browser()
	c.signInByEmail(ann, a, "ann@example.com")
	c.signInByEmail(bob, a, "bob@example.com")
	c.admin(c.dbURL, "sessions", "revoke", "--user", "ann@example.com").ok(t, "revoked the sessions of user ann@example.com (")
	endsWithin(t, ann, a, time.Now(), poll+3*time.Second)

	require.NoError(t, pg.Stop())
	const failing = "session revocation poll: failing"
	waitForLog(t, a, failing)
	time.Sleep(10 * poll) // ten polls more, every one failing
	require.Equal(t, 1, strings.Count(a.logs.String(), failing), "one line per outage, not per poll")
	require.Empty(t, ann.email(a), "a revocation read before the outage still applies")

	require.NoError(t, pg.Start())
	waitForLog(t, a, "session revocation poll: resumed")
	require.Equal(t, "bob@example.com", bob.email(a))
	c.admin(c.dbURL, "sessions", "revoke", "--user", "bob@example.com").ok(t, "revoked the sessions of user bob@example.com (")
	endsWithin(t, bob, a, time.Now(), poll+3*time.Second)
	require.Equal(t, 1, strings.Count(a.logs.String(), failing))
	require.True(t, a.running())
}

// An instance started while PostgreSQL is down (a fail-over under way, a
// database host still booting) waits for it, up to database.startup_wait,
// and comes up by itself once it answers: migrated, serving sign-ins. It
// says once that it waits, and does not listen meanwhile (a load balancer
// sends it nothing).
func TestStartUpWaitsForTheDatabase(t *testing.T) {
	pg := ownServer(t)
	c := newCluster(t, pgtest.NewDatabase(t, pg.AdminURL))
	c.appendConfig("database:\n  startup_wait: 30s\n")
	require.NoError(t, pg.Stop())
	c.nodes = c.launchAll(1)
	a := c.nodes[0]
	waitForLog(t, a, "database not ready at start-up")
	require.True(t, a.running(), "it waits instead of exiting")
	require.NotContains(t, a.logs.String(), "latchkey listening")

	require.NoError(t, pg.Start())
	a.waitReady(t)
	require.Equal(t, 1, strings.Count(a.logs.String(), "database not ready at start-up"), "one line per kind of failure, not per attempt")
	require.Contains(t, a.logs.String(), "database ready; starting")
	br := c.browser()
	c.signInByEmail(br, a, "cy@example.com")
	require.Equal(t, "cy@example.com", br.email(a))
}

// The purge meets a stopped database: it says so once however often it
// is tried meanwhile, and runs again by itself once the database is back
// (rows that expired are deleted), saying "resumed".
//
// In-process, as TestPurgeOnEveryInstanceAtOnce: the purge interval has no
// setting (hourly is right in production).
func TestPurgeThroughDatabaseRestart(t *testing.T) {
	pg := ownServer(t)
	a, _, logs := servePurging(t, inProcessConfig(t, pgtest.NewDatabase(t, pg.AdminURL)), 20*time.Millisecond)
	ctx := context.Background()

	require.NoError(t, pg.Stop())
	const failing = "purge expired rows: failing"
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), failing) }, patience, 10*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // some twenty purges more, every one failing
	require.Equal(t, 1, strings.Count(logs.String(), failing), "one line per outage, not per purge: %s", logs)

	require.NoError(t, pg.Start())
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "purge expired rows: resumed") }, patience, 10*time.Millisecond)
	st := a.Store()
	addr := "dee@example.com"
	u := &models.User{ID: models.NewID(), Email: &addr}
	require.NoError(t, st.CreateUser(ctx, u))
	now := time.Now()
	require.NoError(t, st.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: "expired", SignedIn: now.Add(-time.Hour), Expires: now.Add(-time.Minute)}))
	require.NoError(t, st.CreateVerificationToken(ctx, addr, "expired-link", now.Add(-time.Minute)))
	require.Eventually(t, func() bool {
		n, err := st.Count(ctx)
		return err == nil && n.Sessions == 0 && n.VerificationTokens == 0
	}, patience, 10*time.Millisecond, "the purge runs again after the restart")
	require.Equal(t, 1, strings.Count(logs.String(), failing))
	require.NotContains(t, logs.String(), dbPassword)
}

// waitForLog waits until in has logged text, failing if it exits first.
func waitForLog(t *testing.T, in *instance, text string) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !strings.Contains(in.logs.String(), text) {
		if !in.running() {
			t.Fatalf("instance %s exited (%d) before logging %q; logs:\n%s", in.name, in.cmd.ProcessState.ExitCode(), text, in.logs)
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s did not log %q within %s; logs:\n%s", in.name, text, patience, in.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
