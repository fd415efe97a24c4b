package main

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// setSharedBuffers sets the cluster's shared_buffers (ALTER SYSTEM) and
// restarts it, which that setting needs: only a cluster pgtest started
// can be restarted.
func setSharedBuffers(srv *pgtest.Server, size string) error {
	admin, err := sql.Open("pgx", srv.AdminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.Exec("ALTER SYSTEM SET shared_buffers = " + pgQuote(size)); err != nil {
		return fmt.Errorf("shared_buffers = %s: %w", size, err)
	}
	_ = admin.Close()
	if err := srv.Stop(); err != nil {
		return fmt.Errorf("restart for shared_buffers: %w", err)
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("restart for shared_buffers: %w", err)
	}
	logf("PostgreSQL restarted with shared_buffers = %s", size)
	return nil
}

// pgQuote is s as an SQL string literal.
func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
