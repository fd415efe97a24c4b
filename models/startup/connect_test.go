package startup_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/startup"
)

// pg is a cluster of this package's own: every test stops and starts it,
// one at a time (none is parallel).
var pg *pgtest.Server

func TestMain(m *testing.M) {
	var err error
	if pg, err = pgtest.StartCluster(); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
	code := m.Run()
	pg.Close()
	os.Exit(code)
}

// What waiting may mend, and what it may not.
func TestTransient(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("postgres %w: %w", models.ErrNoAnswer, err) }
	transient := map[string]error{
		"refused":             wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
		"no read-write host":  wrap(errors.New("failed to connect to `user=latchkey database=latchkey`: ValidateConnect failed (read only connection)")),
		"standby":             fmt.Errorf("migrate: step 3: %w", &pgconn.PgError{Code: "25006"}),
		"shutting down":       &pgconn.PgError{Code: "57P01"},
		"starting up":         wrap(&pgconn.PgError{Code: "57P03"}),
		"lock wait timed out": fmt.Errorf("migrate: take the migration lock: %w", &pgconn.PgError{Code: "57014"}),
		"too many conns":      wrap(&pgconn.PgError{Code: "53300"}),
		"cut":                 fmt.Errorf("migrate: %w", io.ErrUnexpectedEOF),
		"marked by failover":  fmt.Errorf("migrate: %w", unavailable{}),
	}
	for name, err := range transient {
		require.True(t, startup.Transient(err), name)
	}
	lasting := map[string]error{
		"wrong password":   wrap(&pgconn.PgError{Code: "28P01"}),
		"no such database": wrap(&pgconn.PgError{Code: "3D000"}),
		"schema too new":   fmt.Errorf("%w: it is at version 99", models.ErrSchemaTooNew),
		"bad step":         fmt.Errorf("migrate: step 4: %w", &pgconn.PgError{Code: "42601"}),
		// The fail-over driver marks every failed connect; a login or a
		// certificate refused is not mended by waiting all the same.
		"marked, but a wrong password": fmt.Errorf("%w: %w", unavailable{}, &pgconn.PgError{Code: "28P01"}),
		"marked, but an unknown CA":    wrap(fmt.Errorf("%w: %w", unavailable{}, x509.UnknownAuthorityError{})),
		"nil":                          nil,
	}
	for name, err := range lasting {
		require.False(t, startup.Transient(err), name)
	}
}

type unavailable struct{}

func (unavailable) Error() string     { return "database unavailable" }
func (unavailable) Unavailable() bool { return true }

// An instance started while PostgreSQL is down comes up once it is back,
// within database.startup_wait, having said once that it waits and once
// that it goes on; the log never shows the password.
func TestConnectWaitsForTheDatabase(t *testing.T) {
	cfg := postgresConfig(t, pgtest.NewDatabase(t, pg.AdminURL))
	require.NoError(t, pg.Stop())
	started := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		started <- pg.Start()
	}()
	var logs bytes.Buffer
	s, err := startup.Connect(context.Background(), cfg, wait(&logs, 30*time.Second))
	require.NoError(t, err, logs.String())
	defer s.Close()
	require.NoError(t, <-started)
	require.NoError(t, s.Ready(context.Background()), "migrated and answering")
	require.Equal(t, 1, strings.Count(logs.String(), "database not ready at start-up"), logs.String())
	require.Contains(t, logs.String(), "reason=\"connection refused\"")
	require.Contains(t, logs.String(), "database ready; starting")
	require.NotContains(t, logs.String(), "pg-secret")
}

// Waiting has a bound: after it, the error is today's (the database does
// not answer, and why), saying which setting bounded the wait.
func TestConnectGivesUp(t *testing.T) {
	cfg := postgresConfig(t, pgtest.NewDatabase(t, pg.AdminURL))
	require.NoError(t, pg.Stop())
	t.Cleanup(func() { require.NoError(t, pg.Start()) })
	var logs bytes.Buffer
	began := time.Now()
	_, err := startup.Connect(context.Background(), cfg, wait(&logs, 1500*time.Millisecond))
	require.ErrorIs(t, err, models.ErrNoAnswer)
	require.ErrorContains(t, err, "gave up waiting for the database after")
	require.ErrorContains(t, err, "database.startup_wait")
	require.ErrorContains(t, err, "connection refused")
	require.Less(t, time.Since(began), 15*time.Second)
	require.Equal(t, 1, strings.Count(logs.String(), "database not ready at start-up"), "one line per kind of failure, not per attempt: %s", logs.String())

	// No wait at all: one attempt, the plain error.
	_, err = startup.Connect(context.Background(), cfg, wait(&logs, 0))
	require.ErrorIs(t, err, models.ErrNoAnswer)
	require.NotContains(t, err.Error(), "gave up")

	// A stop asked during the wait ends it at once.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	began = time.Now()
	_, err = startup.Connect(ctx, cfg, wait(&logs, time.Minute))
	require.ErrorContains(t, err, "start-up stopped while waiting for the database")
	require.Less(t, time.Since(began), 15*time.Second)
}

// What waiting cannot mend gives up at once, whatever the wait.
func TestConnectDoesNotWaitForAMistake(t *testing.T) {
	u := pgtest.NewDatabase(t, pg.AdminURL)
	cfg := postgresConfig(t, strings.Replace(u, "/t_", "/no_such_", 1))
	began := time.Now()
	_, err := startup.Connect(context.Background(), cfg, wait(&bytes.Buffer{}, time.Minute))
	require.ErrorContains(t, err, "does not exist")
	require.Less(t, time.Since(began), 10*time.Second)
}

// The migration lock's holder loses its connection (its primary went
// away) while another instance waits for the lock: the waiting instance
// takes the lock on the server that is there now and migrates, and what
// the holder had done in its unfinished step was rolled back, never left
// half-applied.
func TestMigrationLockHolderLost(t *testing.T) {
	dbURL := pgtest.NewDatabase(t, pg.AdminURL)
	cfg := postgresConfig(t, dbURL)
	holder, err := sql.Open("pgx", dbURL)
	require.NoError(t, err)
	defer holder.Close()
	ctx := context.Background()
	conn, err := holder.Conn(ctx)
	require.NoError(t, err)
	// A migrating instance: the lock (models.Migrate's advisory lock),
	// then a step half done in its transaction.
	_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(0x6c61746368))
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "BEGIN; CREATE TABLE schema_migrations (version bigint PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL); CREATE TABLE users (id text PRIMARY KEY)")
	require.NoError(t, err)

	var logs bytes.Buffer
	done := make(chan error, 1)
	var s *models.Store
	go func() {
		var err error
		s, err = startup.Connect(ctx, cfg, wait(&logs, 30*time.Second))
		done <- err
	}()
	// It waits for the lock: that is what the test is about.
	require.Eventually(t, func() bool {
		var waiting int
		err := holder.QueryRowContext(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&waiting)
		return err == nil && waiting == 1
	}, 10*time.Second, 20*time.Millisecond, "the starting instance waits for the migration lock")

	// The primary goes away under both, and comes back.
	require.NoError(t, pg.Stop())
	require.NoError(t, pg.Start())
	select {
	case err := <-done:
		require.NoError(t, err, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting for the database")
	}
	defer s.Close()
	st, err := s.Status(ctx)
	require.NoError(t, err)
	require.Empty(t, st.Pending)
	require.Equal(t, models.SchemaVersion(), st.Applied)
	require.NoError(t, s.Ready(ctx))
	db, err := sql.Open("pgx", dbURL)
	require.NoError(t, err)
	defer db.Close()
	var n, steps int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT version) FROM schema_migrations").Scan(&n, &steps))
	require.Equal(t, len(models.Versions()), n, "every step recorded once")
	require.Equal(t, n, steps)
}

// postgresConfig is a store config for dbURL with a password in it (the
// test cluster trusts loopback, so it is never checked), to show that no
// log line repeats it.
func postgresConfig(t *testing.T, dbURL string) models.Config {
	t.Helper()
	return models.Config{Dialect: models.DialectPostgres, DSN: strings.Replace(dbURL, "postgres@", "postgres:pg-secret@", 1)}
}

func wait(logs *bytes.Buffer, d time.Duration) startup.Wait {
	return startup.Wait{For: d, Log: slog.New(slog.NewTextHandler(logs, nil)), Target: "postgres://postgres:***@127.0.0.1/db"}
}
