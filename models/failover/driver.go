package failover

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Open returns a database/sql handle on the PostgreSQL at dsn (a URL or
// key=value string; several hosts with target_session_attrs=read-write
// make pgx connect to whichever is the primary) whose errors are
// classified as this package says.
func Open(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse PostgreSQL connection string: %w", err)
	}
	w := &watch{}
	inner := stdlib.GetConnector(*cfg,
		stdlib.OptionBeforeConnect(w.beforeConnect),
		stdlib.OptionShouldPing(w.shouldPing),
		stdlib.OptionResetSession(onStandby),
	)
	return sql.OpenDB(connector{inner: inner, w: w}), nil
}

// connector hands out wrapped connections and marks a failed connect.
type connector struct {
	inner driver.Connector
	w     *watch
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		if refused, ran := kind(err); refused || ran {
			// Not ErrBadConn: database/sql would dial again at once, and a
			// host that times out would hold the request three times over.
			return nil, &Error{err: err}
		}
		return nil, err
	}
	sc, ok := dc.(*stdlib.Conn)
	if !ok {
		return dc, nil
	}
	return &conn{Conn: sc, w: c.w}, nil
}

func (c connector) Driver() driver.Driver { return c.inner.Driver() }

// conn is pgx's connection with its statements' errors classified. The
// embedded *stdlib.Conn supplies everything else database/sql asks for
// (Ping, ResetSession, CheckNamedValue, Close).
type conn struct {
	*stdlib.Conn
	w    *watch
	inTx bool
}

// PgxConn is the pgx connection underneath, for what database/sql cannot
// say, such as COPY (models/scalefill's fill of PostgreSQL).
func (c *conn) PgxConn() *pgx.Conn { return c.Conn.Conn() }

func (c *conn) failed(err error, query string) error {
	err = classify(err, statement{read: isRead(query), inTx: c.inTx})
	if _, ok := err.(*Error); ok {
		c.w.markLost()
	}
	return err
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.ExecContext(ctx, query, args)
	if err != nil {
		return nil, c.failed(err, query)
	}
	return r, nil
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.Conn.QueryContext(ctx, query, args)
	if err != nil {
		return nil, c.failed(err, query)
	}
	return c.result(r, query), nil
}

// result wraps a statement's rows so that the errors met while reading
// them are classified too: pgx answers a query once its first message
// came, so a connection lost after that — a DELETE ... RETURNING whose
// answer never came, the server shutting down mid-result — surfaces in
// Next or Close, not in the query's own error.
func (c *conn) result(r driver.Rows, query string) driver.Rows {
	if sr, ok := r.(*stdlib.Rows); ok {
		return &rows{Rows: sr, conn: c, query: query}
	}
	return r
}

// rows is a result whose reading errors are classified. The embedded
// *stdlib.Rows supplies the column-type methods database/sql asks for.
type rows struct {
	*stdlib.Rows
	conn  *conn
	query string
}

// Next classifies every error but io.EOF, the end of the rows.
func (r *rows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err != nil && err != io.EOF {
		return r.conn.failed(err, r.query)
	}
	return err
}

func (r *rows) Close() error {
	if err := r.Rows.Close(); err != nil {
		return r.conn.failed(err, r.query)
	}
	return nil
}

// PrepareContext wraps the statement: pgx's statements call its
// connection directly, past this wrapper.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.Conn.PrepareContext(ctx, query)
	if err != nil {
		// Preparing runs nothing: always safe to do again elsewhere.
		return nil, classify(err, statement{read: true, inTx: c.inTx})
	}
	return &stmt{Stmt: s.(*stdlib.Stmt), conn: c, query: query}, nil
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// BeginTx marks the connection as in a transaction until it ends: a
// statement inside one cannot be retried alone. BEGIN itself changes
// nothing, so its failure always may be.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	t, err := c.Conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, classify(err, statement{read: true})
	}
	c.inTx = true
	return &tx{Tx: t, conn: c}, nil
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// tx ends the transaction mark. A failed COMMIT is one whose outcome is
// unknown: marked, never retried.
type tx struct {
	driver.Tx
	conn *conn
}

func (t *tx) Commit() error {
	t.conn.inTx = false
	if err := t.Tx.Commit(); err != nil {
		return t.conn.failed(err, "COMMIT")
	}
	return nil
}

func (t *tx) Rollback() error {
	t.conn.inTx = false
	if err := t.Tx.Rollback(); err != nil {
		return t.conn.failed(err, "ROLLBACK")
	}
	return nil
}

// stmt is a prepared statement whose errors are classified.
type stmt struct {
	*stdlib.Stmt
	conn  *conn
	query string
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	r, err := s.Stmt.ExecContext(ctx, args)
	if err != nil {
		return nil, s.conn.failed(err, s.query)
	}
	return r, nil
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	r, err := s.Stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, s.conn.failed(err, s.query)
	}
	return s.conn.result(r, s.query), nil
}

// onStandby drops a pooled connection whose server has become a standby
// (PostgreSQL 14 and later report in_hot_standby to every session), before
// a request meets its read-only error. It costs no round trip.
func onStandby(_ context.Context, c *pgx.Conn) error {
	if c.PgConn().ParameterStatus("in_hot_standby") == "on" {
		return driver.ErrBadConn
	}
	return nil
}

// lostWindow is how long after a fail-over error is seen every pooled
// connection is pinged before reuse.
//
// pgx pings on its own only a connection idle for over a second, so after
// a restart or a fail-over each connection used in the second before it
// would fail the next statement sent on it: one failed request per pooled
// connection. Once one has failed, pinging all of them removes the rest
// first. A second of window would cover them (any later reuse is over a
// second idle, so pgx pings it anyway); five leave room for a slow clock.
const lostWindow = 5 * time.Second
