package failover

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// Which errors are a fail-over, and which of them database/sql may run
// again: never a write whose outcome is unknown.
func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Severity: "ERROR"}) }
	write, read := statement{}, statement{read: true}
	inTx := statement{read: true, inTx: true}
	for _, tc := range []struct {
		name        string
		err         error
		st          statement
		unavailable bool
		retry       bool
	}{
		{"a read-only standby refuses a write: nothing ran", pg("25006"), write, true, true},
		{"not accepting connections yet", pg("57P03"), write, true, true},
		{"admin shutdown under a write: it may have committed", pg("57P01"), write, true, false},
		{"admin shutdown under a read", pg("57P01"), read, true, true},
		{"crash shutdown", pg("57P02"), write, true, false},
		{"connection exception", pg("08006"), write, true, false},
		{"statement timeout on a write", pg("57014"), write, true, false},
		{"reset under a write: outcome unknown", fmt.Errorf("write: %w", syscall.ECONNRESET), write, true, false},
		{"reset under a read", fmt.Errorf("read: %w", syscall.ECONNRESET), read, true, true},
		{"EOF under a read", io.ErrUnexpectedEOF, read, true, true},
		{"pgx could not send it", driver.ErrBadConn, write, true, true},
		{"inside a transaction nothing is retried alone", pg("25006"), inTx, true, false},
		{"a read inside a transaction", syscall.ECONNRESET, inTx, true, false},
		{"a unique violation is an answer", pg("23505"), write, false, false},
		{"a syntax error is a bug, not an outage", pg("42601"), read, false, false},
		{"a client that went away", context.Canceled, read, false, false},
		{"a plain error", errors.New("boom"), read, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(tc.err, tc.st)
			require.Equal(t, tc.unavailable, errors.Is(got, ErrUnavailable))
			require.Equal(t, tc.retry, errors.Is(got, driver.ErrBadConn))
			require.ErrorIs(t, got, tc.err, "the driver's error stays reachable")
			var u interface{ Unavailable() bool }
			require.Equal(t, tc.unavailable, errors.As(got, &u), "the kit's test finds the same errors")
		})
	}
}

func TestIsRead(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT 1":                           true,
		"  select * from sessions":           true,
		"(SELECT 1) UNION (SELECT 2)":        true,
		"SHOW transaction_read_only":         true,
		"SELECT * FROM t FOR UPDATE":         false,
		"SELECT * FROM t FOR SHARE":          false,
		"WITH d AS (DELETE FROM t) SELECT 1": false,
		"INSERT INTO t VALUES (1)":           false,
		"UPDATE t SET a = 1":                 false,
		"COMMIT":                             false,
		"":                                   false,
	} {
		require.Equal(t, want, isRead(q), q)
	}
}
