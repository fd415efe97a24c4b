package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// lostWindow is how long after a dead connection is seen (the server was
// restarted or failed over) every pooled connection is pinged before reuse.
//
// pgx pings on its own only a connection idle for over a second, so after
// a quick restart each connection used in the second before it would fail
// the next statement sent on it: one failed request per pooled connection
// (GET /session answering {}, a sign-in sent to the error page). Once one
// has failed, pinging all of them removes the rest first. A second of
// window would cover them (any later reuse is over a second idle, so pgx
// pings it anyway); five leave room for a slow clock.
const lostWindow = 5 * time.Second

// connWatch remembers when the pool last met a dead connection.
type connWatch struct {
	lost atomic.Int64 // Unix nanoseconds; 0: never
}

func (w *connWatch) markLost() { w.lost.Store(time.Now().UnixNano()) }

func (w *connWatch) recentlyLost() bool {
	at := w.lost.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < lostWindow
}

// postgresDialector opens PostgreSQL through pgx's database/sql driver,
// watching for connections the server has ended.
func postgresDialector(dsn string, w *connWatch) gorm.Dialector {
	return postgres.New(postgres.Config{
		DSN: dsn,
		OptionOpenDB: []stdlib.OptionOpenDB{
			stdlib.OptionBeforeConnect(func(_ context.Context, cc *pgx.ConnConfig) error {
				next := cc.OnPgError // pgx's default closes the connection on FATAL
				cc.OnPgError = func(pc *pgconn.PgConn, e *pgconn.PgError) bool {
					if serverEnded(e) {
						w.markLost()
					}
					if next == nil {
						return !strings.EqualFold(e.Severity, "FATAL")
					}
					return next(pc, e)
				}
				return nil
			}),
			stdlib.OptionShouldPing(func(_ context.Context, p stdlib.ShouldPingParams) bool {
				return p.IdleDuration > time.Second || w.recentlyLost()
			}),
		},
	})
}

// serverEnded reports a PostgreSQL error that ends the session from the
// server's side: class 57P, operator intervention (admin_shutdown,
// crash_shutdown, cannot_connect_now, ...). It is sent instead of an answer,
// so the statement it answers did not run.
func serverEnded(e *pgconn.PgError) bool { return strings.HasPrefix(e.Code, "57P") }

// connectionLost reports whether err means the connection died under a
// statement (rather than the statement failing): the server ended it, or
// the socket was closed or reset. A timeout is not one: retrying would
// double the wait.
func connectionLost(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return serverEnded(pgErr)
	}
	if pgconn.Timeout(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
