package failover_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/failover"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// A PostgreSQL of the test's own (it is stopped and made read-only).
func server(t *testing.T) (*pgtest.Server, *sql.DB) {
	t.Helper()
	pg, err := pgtest.StartCluster()
	require.NoError(t, err)
	t.Cleanup(pg.Close)
	db, err := failover.Open(pgtest.NewDatabase(t, pg.AdminURL))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	_, err = db.Exec("CREATE TABLE t (id int PRIMARY KEY)")
	require.NoError(t, err)
	return pg, db
}

func count(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM t").Scan(&n))
	return n
}

// A node that turned read-only under the pool (a demoted primary, before
// it restarts): a write is refused, marked unavailable, and nothing is
// written; reads go on; once the node is writable the same pool writes.
func TestReadOnlyNodeRefusesWritesCleanly(t *testing.T) {
	_, db := server(t)
	ctx := context.Background()
	admin := func(q string) {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	admin("ALTER SYSTEM SET default_transaction_read_only = on")
	admin("SELECT pg_reload_conf()")
	require.Eventually(t, func() bool {
		_, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1)")
		return err != nil
	}, 5*time.Second, 50*time.Millisecond, "the reload reaches the pooled sessions")

	_, err := db.ExecContext(ctx, "INSERT INTO t VALUES (2)")
	require.ErrorIs(t, err, failover.ErrUnavailable)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr))
	require.Equal(t, "25006", pgErr.Code)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM t WHERE id = 2").Scan(&n), "reads still answer")
	require.Zero(t, n, "nothing was written")

	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	for _, q := range []string{"SET default_transaction_read_only = off", "ALTER SYSTEM RESET default_transaction_read_only", "SELECT pg_reload_conf()"} {
		_, err = conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, conn.Close())
	require.Eventually(t, func() bool {
		_, err := db.ExecContext(ctx, "INSERT INTO t VALUES (3)")
		return err == nil
	}, 5*time.Second, 50*time.Millisecond, "the same pool writes again")
}

// The server stopped: every statement fails at once, marked unavailable
// (no hang, no unmarked error); started again, the same pool answers
// without the caller doing anything, its dead connections replaced.
func TestStoppedServerIsUnavailableThenComesBack(t *testing.T) {
	pg, db := server(t)
	db.SetMaxIdleConns(4)
	ctx := context.Background()
	for i := range 4 { // several pooled connections, all used
		_, err := db.ExecContext(ctx, "INSERT INTO t VALUES ($1)", i)
		require.NoError(t, err)
	}

	require.NoError(t, pg.Stop())
	_, err := db.ExecContext(ctx, "INSERT INTO t VALUES (10)")
	require.ErrorIs(t, err, failover.ErrUnavailable)
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n)
	require.ErrorIs(t, err, failover.ErrUnavailable)
	_, err = db.BeginTx(ctx, nil)
	require.ErrorIs(t, err, failover.ErrUnavailable)

	require.NoError(t, pg.Start())
	require.Equal(t, 4, count(t, db), "the first read after the restart answers")
	_, err = db.ExecContext(ctx, "INSERT INTO t VALUES (11)")
	require.NoError(t, err)
	require.Equal(t, 5, count(t, db))
}

// Connections used within the last second before a restart are not pinged
// by pgx: a read meets one dead, and database/sql runs it again on a fresh
// connection, so the caller sees no error at all.
func TestReadRetriedAfterQuickRestart(t *testing.T) {
	pg, db := server(t)
	db.SetMaxIdleConns(4)
	ctx := context.Background()
	stmt, err := db.PrepareContext(ctx, "SELECT count(*) FROM t")
	require.NoError(t, err)
	defer stmt.Close()
	for range 3 {
		require.NoError(t, pg.Stop())
		require.NoError(t, pg.Start())
		var n int
		require.NoError(t, stmt.QueryRowContext(ctx).Scan(&n), "a prepared read after the restart")
		require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n), "a plain read after the restart")
	}
}

// A connection lost while a result is read — the rows meet it, not the
// statement, as a DELETE ... RETURNING whose answer never came — is
// marked unavailable like one lost on the statement: it was a sign-out
// answered as a Configuration error (and its row gone) in a fail-over
// test's planned switchover. The pool answers again after it.
func TestLostWhileReadingRowsIsUnavailable(t *testing.T) {
	_, db := server(t)
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, "SELECT g, CASE WHEN g = 5000 THEN pg_terminate_backend(pg_backend_pid()) END FROM generate_series(1, 100000) g")
	require.NoError(t, err, "the statement was sent and its first rows came")
	n := 0
	for rows.Next() {
		n++
	}
	require.Less(t, n, 100000, "the connection was lost before the last row")
	require.ErrorIs(t, rows.Err(), failover.ErrUnavailable)
	require.NoError(t, rows.Close())
	require.Zero(t, count(t, db), "the pool answers")
}
