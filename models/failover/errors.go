// Package failover makes latchkey a correct client of a PostgreSQL that
// fails over (pg_auto_failover, Patroni, a managed service's endpoint): it
// wraps pgx's database/sql driver so that
//
//   - an error that means "no writable primary answered" (the server went
//     away or was demoted, the connection died, no host accepted a
//     read-write session) is marked ErrUnavailable, whatever the statement,
//     so the service answers "try again" (503) instead of "no session" or
//     a 500;
//   - a connection that met such an error, or that points at a standby, is
//     dropped from the pool instead of being handed to the next request;
//   - a statement that failed because of the fail-over is run once more on
//     a fresh connection when that is safe: a read, or a write the server
//     refused before running it. A write whose outcome is unknown (the
//     connection died after it was sent) is never sent twice.
//
// The retry is database/sql's own: an error that is driver.ErrBadConn makes
// it take another connection and run the statement again. This package
// says which errors may be read that way.
package failover

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable is in the chain of every error that means no writable
// primary answered: errors.Is(err, ErrUnavailable). Packages that may not
// import storage (the HTTP kit) find the same errors by their method
// Unavailable() bool.
var ErrUnavailable = unavailable{}

type unavailable struct{}

func (unavailable) Error() string     { return "database unavailable" }
func (unavailable) Unavailable() bool { return true }

// Error is a driver error read as a fail-over: Unwrap gives the driver's
// own error (a *pgconn.PgError stays reachable for errors.As).
type Error struct {
	err error
	// retry: the statement did not run (or was a read), so database/sql may
	// run it again on another connection.
	retry bool
}

func (e *Error) Error() string     { return "database unavailable: " + e.err.Error() }
func (e *Error) Unwrap() error     { return e.err }
func (e *Error) Unavailable() bool { return true }

// Is makes the error ErrUnavailable, and driver.ErrBadConn when the
// statement may run again: database/sql then drops the connection and
// retries on another.
func (e *Error) Is(target error) bool {
	return target == ErrUnavailable || (e.retry && target == driver.ErrBadConn)
}

// statement says what failed, for the retry rule.
type statement struct {
	read bool // a plain SELECT (or SHOW): running it twice changes nothing
	inTx bool // inside a transaction: database/sql cannot retry it alone
}

// classify returns err marked when it is a fail-over, or err as it is
// (nil, an answer like a unique violation, a cancelled request).
func classify(err error, st statement) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	var done *Error
	if errors.As(err, &done) {
		return err
	}
	refused, ran := kind(err)
	if !refused && !ran {
		return err
	}
	// pgx already says driver.ErrBadConn for a statement it could not send.
	notSent := errors.Is(err, driver.ErrBadConn)
	retry := !st.inTx && (notSent || refused || st.read)
	return &Error{err: err, retry: retry}
}

// kind sorts a fail-over error: refused means the server turned the
// statement down before running it (read-only standby, not accepting
// connections); ran means it may have run, or did (the connection died
// under it, the server shut down, the statement timed out). Neither: not a
// fail-over.
func kind(err error) (refused, ran bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "25006", // read_only_sql_transaction: a demoted or standby node
			pgErr.Code == "57P03": // cannot_connect_now: starting up or shutting down
			return true, false
		case strings.HasPrefix(pgErr.Code, "57P"), // admin or crash shutdown: maybe committed locally
			strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57014",               // statement_timeout: a write waiting on a lost standby
			pgErr.Code == "53300":               // too_many_connections: every instance reconnecting at once
			return false, true
		}
		return false, false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true, false // no connection, no statement
	}
	var netErr net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr):
		return false, true
	}
	if strings.Contains(err.Error(), "conn closed") { // pgx's own word for a connection it closed
		return false, true
	}
	return false, false
}

// isRead reports whether query only reads: a SELECT without a locking
// clause, or SHOW. WITH may hide a write, so it is not one.
func isRead(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	if len(q) < 6 {
		return false
	}
	switch strings.ToUpper(q[:4]) {
	case "SHOW":
		return true
	case "SELE":
		upper := strings.ToUpper(q)
		return strings.HasPrefix(upper, "SELECT") && !strings.Contains(upper, " FOR UPDATE") && !strings.Contains(upper, " FOR SHARE")
	}
	return false
}
