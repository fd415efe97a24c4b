package main

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// configurePG sets the cluster's shared_buffers (when asked) and loads
// pg_stat_statements with I/O timing on, so that each load can say where
// PostgreSQL's own CPU went, statement by statement; both need a restart,
// which only a cluster pgtest started allows (a server named by
// LATCHKEY_TEST_POSTGRES_URL keeps its settings and reports no
// statements).
func configurePG(srv *pgtest.Server, sharedBuffers string) error {
	admin, err := sql.Open("pgx", srv.AdminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	set := []string{"shared_preload_libraries = 'pg_stat_statements'", "track_io_timing = on"}
	if sharedBuffers != "" {
		set = append(set, "shared_buffers = "+pgQuote(sharedBuffers))
	}
	for _, s := range set {
		if _, err := admin.Exec("ALTER SYSTEM SET " + s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	_ = admin.Close()
	if err := srv.Stop(); err != nil {
		return fmt.Errorf("restart for %s: %w", strings.Join(set, ", "), err)
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("restart for %s: %w", strings.Join(set, ", "), err)
	}
	logf("PostgreSQL restarted with %s", strings.Join(set, ", "))
	return nil
}

// pgQuote is s as an SQL string literal.
func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// lookupRelations are what GET /session and forward-auth read on
// PostgreSQL: the session by its token hash, its user by key, the user's
// stored groups by key (forward-auth's subquery: its index, and the table
// while the visibility map does not yet let it skip the table).
var lookupRelations = []string{"idx_sessions_token_hash", "sessions", "users_pkey", "users", "user_groups_pkey", "user_groups"}

// prewarmLookups loads lookupRelations into PostgreSQL's buffers
// (pg_prewarm) and returns their size. A server that has been up holds
// in shared_buffers what its lookups read, as far as they fit; a run of a
// few seconds on a cluster just restarted would instead measure each
// page's first read from the OS (a copy into the buffers), which at 10⁷
// sessions is most of the lookups' pages. Only with
// BENCH_PG_SHARED_BUFFERS: a default 128 MB would keep little of them.
func prewarmLookups(s *models.Store) (int64, error) {
	db := s.DB()
	if err := db.Exec("CREATE EXTENSION IF NOT EXISTS pg_prewarm").Error; err != nil {
		return 0, fmt.Errorf("pg_prewarm: %w", err)
	}
	var total int64
	for _, rel := range lookupRelations {
		var blocks int64
		if err := db.Raw("SELECT pg_prewarm(?::regclass)", rel).Scan(&blocks).Error; err != nil {
			return 0, fmt.Errorf("pg_prewarm %s: %w", rel, err)
		}
		total += blocks * 8192
	}
	return total, nil
}
