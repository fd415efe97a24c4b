package scalefill

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/latchkey-auth/latchkey/models"
)

// copyRows writes t's rows into PostgreSQL with COPY FROM STDIN (pgx's
// CopyFrom, binary format): no statement to parse or plan per batch and
// no bound-parameter limit, so a fill of millions of rows takes a
// fraction of the multi-row INSERTs' time. Each CopyFrom of perCopy rows
// is its own transaction, so progress can be told between them.
func copyRows(ctx context.Context, s *models.Store, t table, progress func(string, int)) error {
	db, err := s.DB().DB()
	if err != nil {
		return fmt.Errorf("fill %s: database handle: %w", t.name, err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("fill %s: connection: %w", t.name, err)
	}
	defer conn.Close()
	const perCopy = 100_000
	return conn.Raw(func(driverConn any) error {
		pc, err := pgxConn(driverConn)
		if err != nil {
			return fmt.Errorf("fill %s: %w", t.name, err)
		}
		for start := 0; start < t.n; start += perCopy {
			end := min(t.n, start+perCopy)
			i := start
			src := pgx.CopyFromFunc(func() ([]any, error) {
				if i >= end {
					return nil, nil
				}
				i++
				return t.row(i - 1), nil
			})
			n, err := pc.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, src)
			if err != nil {
				return fmt.Errorf("fill %s: copy rows %d–%d: %w", t.name, start, end, err)
			}
			if n != int64(end-start) {
				return fmt.Errorf("fill %s: copy wrote %d rows, want %d", t.name, n, end-start)
			}
			if progress != nil {
				progress(t.name, end)
			}
		}
		return nil
	})
}

// pgxConn is the pgx connection of a database/sql driver connection:
// pgx's own *stdlib.Conn, or models/failover's, which wraps one.
func pgxConn(driverConn any) (*pgx.Conn, error) {
	switch c := driverConn.(type) {
	case *stdlib.Conn:
		return c.Conn(), nil
	case interface{ PgxConn() *pgx.Conn }:
		return c.PgxConn(), nil
	}
	return nil, fmt.Errorf("driver connection %T holds no pgx connection", driverConn)
}
