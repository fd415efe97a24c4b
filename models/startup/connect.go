// Package startup opens the database when latchkey starts, waiting out a
// PostgreSQL that is not there yet: an instance (re)started during a
// fail-over, while no node is a writable primary, or before its database
// host has come up, keeps trying for a bounded time (database.startup_wait)
// instead of exiting and leaving the restart to a supervisor's back-off.
//
// What it waits for is what a fail-over looks like from the client (no
// answer, a refused or cut connection, a server starting or shutting down,
// a read-only standby, a migration lock wait that timed out); what waiting
// cannot mend (a refused login, an unknown database, a schema from a newer
// latchkey, a migration step PostgreSQL refuses) gives up at once, with
// the error it gives today.
//
// A migration interrupted by a fail-over is retried as a whole: each
// step runs in one transaction with its version row (models.Migrate), so
// a lost connection rolls it back, and the next attempt takes the
// migration lock (a session lock, released with the session that held it,
// and unknown to the new primary) and applies what is still pending.
package startup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/latchkey-auth/latchkey/models"
)

// Wait says how long Connect keeps trying and where it says so.
type Wait struct {
	// For is how long after the first attempt another may start; 0 tries
	// once. An attempt under way is not cut short (it is bounded by the
	// connection's own time limits, some 10 s).
	For time.Duration
	// Log gets one line when the database is first found not ready, one
	// more each time the reason changes, and one when it answers.
	Log *slog.Logger
	// Target names the database in those lines: the caller's redacted
	// DATABASE_URL (never with its password).
	Target string
}

// The pause between attempts doubles from firstPause up to maxPause, with
// a fifth of jitter so that instances started together do not knock at
// the same instant.
const (
	firstPause = 250 * time.Millisecond
	maxPause   = 5 * time.Second
)

// Connect is models.Connect (open, ping, migrate) tried again while the
// failure is one that waiting may mend (Transient), for up to w.For. A
// SQLite database is opened once: it is a local file, nothing to wait for.
// ctx ends the wait (a SIGTERM during start-up).
func Connect(ctx context.Context, c models.Config, w Wait) (*models.Store, error) {
	log := w.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	pause, reason := firstPause, ""
	for attempt := 1; ; attempt++ {
		s, err := models.Connect(c)
		if err == nil {
			if attempt > 1 {
				log.Info("database ready; starting", "database", w.Target, "waited", time.Since(start).Round(time.Millisecond), "attempts", attempt)
			}
			return s, nil
		}
		if c.Dialect != models.DialectPostgres || !Transient(err) {
			return nil, err
		}
		left := w.For - time.Since(start)
		if left <= 0 {
			if w.For <= 0 {
				return nil, err
			}
			return nil, fmt.Errorf("gave up waiting for the database after %s (database.startup_wait; %d attempts): %w",
				time.Since(start).Round(time.Second), attempt, err)
		}
		if r := reasonOf(err); r != reason {
			reason = r
			log.Warn("database not ready at start-up; trying again", "reason", r, "database", w.Target,
				"gives_up_in", left.Round(time.Second), "err", err)
		}
		t := time.NewTimer(min(jitter(pause), left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("start-up stopped while waiting for the database: %w", err)
		case <-t.C:
		}
		pause = min(2*pause, maxPause)
	}
}

// jitter is d give or take a tenth.
func jitter(d time.Duration) time.Duration {
	return d - d/10 + rand.N(d/5+1)
}

// Transient reports whether err, from opening or migrating PostgreSQL,
// may go away by waiting: the server did not answer or cut the connection,
// is starting up or shutting down, is a standby (a read-only session, or no
// host accepted target_session_attrs=read-write), has no connection slot
// free, or a statement (the migration lock's wait) timed out or lost a
// serialization race. A refused login, an unknown database, a TLS
// certificate that does not verify, a schema too new and an error in a
// migration's SQL are not.
func Transient(err error) bool {
	if err == nil || errors.Is(err, models.ErrSchemaTooNew) {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) { // the server's own word decides
		switch pg.Code[:min(2, len(pg.Code))] {
		case "08", // connection exception
			"57", // operator intervention: shutting down, starting up, statement timeout
			"53", // insufficient resources: too many connections
			"40": // transaction rollback: serialization failure, deadlock
			return true
		}
		return pg.Code == "25006" // read_only_sql_transaction: a standby
	}
	var (
		unknownCA x509.UnknownAuthorityError
		badHost   x509.HostnameError
		badCert   x509.CertificateInvalidError
		badRecord tls.RecordHeaderError
		tlsVerify *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownCA) || errors.As(err, &badHost) || errors.As(err, &badCert) ||
		errors.As(err, &badRecord) || errors.As(err, &tlsVerify) {
		return false
	}
	// The mark of the fail-over driver (models/failover): no writable
	// primary answered.
	var u interface{ Unavailable() bool }
	if errors.As(err, &u) && u.Unavailable() {
		return true
	}
	return errors.Is(err, models.ErrNoAnswer) || connectionLost(err)
}

// connectionLost reports an error of the connection rather than of the
// statement: the socket was refused, reset, closed or timed out.
func connectionLost(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || pgconn.Timeout(err) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// reasonOf names a transient failure for the log, so that a wait is
// logged once per kind of failure rather than once per attempt.
func reasonOf(err error) string {
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &pg) && pg.Code == "25006", strings.Contains(err.Error(), "read only connection"):
		return "standby: no writable primary"
	case errors.As(err, &pg) && strings.HasPrefix(pg.Code, "57P"):
		return "server starting or shutting down"
	case errors.As(err, &pg) && pg.Code == "57014":
		return "statement timed out (waiting for the migration lock?)"
	case errors.As(err, &pg) && strings.HasPrefix(pg.Code, "53"):
		return "server out of connections or resources"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.Is(err, models.ErrNoAnswer):
		return "no answer"
	}
	return "connection lost"
}
