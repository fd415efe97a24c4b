package failover

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// watch remembers when the pool last met a fail-over.
type watch struct {
	lost atomic.Int64 // Unix nanoseconds; 0: never
}

func (w *watch) markLost() { w.lost.Store(time.Now().UnixNano()) }

func (w *watch) recentlyLost() bool {
	at := w.lost.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < lostWindow
}

// shouldPing pings a connection before reuse when it sat idle for over a
// second (pgx's default) or a fail-over was seen lately.
func (w *watch) shouldPing(_ context.Context, p stdlib.ShouldPingParams) bool {
	return p.IdleDuration > time.Second || w.recentlyLost()
}

// beforeConnect makes every new connection report a server that ends it
// (class 57P: admin or crash shutdown, cannot connect now), which pgx
// would otherwise only act on by closing that one connection.
func (w *watch) beforeConnect(_ context.Context, cc *pgx.ConnConfig) error {
	next := cc.OnPgError // pgx's default closes the connection on FATAL
	cc.OnPgError = func(pc *pgconn.PgConn, e *pgconn.PgError) bool {
		if strings.HasPrefix(e.Code, "57P") {
			w.markLost()
		}
		if next == nil {
			return !strings.EqualFold(e.Severity, "FATAL")
		}
		return next(pc, e)
	}
	return nil
}
