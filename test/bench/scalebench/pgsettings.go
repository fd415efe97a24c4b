package main

import (
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// configurePG sets the cluster's shared_buffers and huge pages (when
// asked) and loads pg_stat_statements with I/O timing on, so that each
// load can say where PostgreSQL's own CPU went, statement by statement;
// all need a restart,
// which only a cluster pgtest started allows (a server named by
// LATCHKEY_TEST_POSTGRES_URL keeps its settings and reports no
// statements).
func configurePG(srv *pgtest.Server, sharedBuffers string, hugePages bool, extra []string) error {
	admin, err := sql.Open("pgx", srv.AdminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	set := []string{"shared_preload_libraries = 'pg_stat_statements'", "track_io_timing = on"}
	if sharedBuffers != "" {
		set = append(set, "shared_buffers = "+pgQuote(sharedBuffers))
	}
	if hugePages {
		set = append(set, "huge_pages = on")
	}
	for _, e := range extra {
		name, value, ok := strings.Cut(e, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || !settingName.MatchString(name) || value == "" {
			return fmt.Errorf("BENCH_PG_SET: %q is not name=value", e)
		}
		set = append(set, name+" = "+pgQuote(value))
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

// settingName is what a PostgreSQL setting's name may be (BENCH_PG_SET).
var settingName = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)

// pgQuote is s as an SQL string literal.
func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// lookupRelations are what GET /session and forward-auth read on
// PostgreSQL: the session by its token hash, its user by key, the user's
// stored groups by key (forward-auth's subquery).
var lookupRelations = []string{"idx_sessions_token_hash", "sessions", "users_pkey", "users", "user_groups_pkey", "user_groups"}

// prewarm loads the database's tables and indexes into PostgreSQL's
// buffers (pg_prewarm), lookupRelations last so that they are the ones
// kept should the buffers be smaller than the database, and returns the
// bytes loaded. A server that has been up holds in shared_buffers what
// its requests read, as far as it fits; a run of a few seconds on a
// cluster just restarted would instead measure each page's first read
// from the OS (a copy into the buffers): at 10⁷ sessions most of the
// pages a random session or sign-in reads (the sign-ins' reads of users
// by e-mail, accounts, passwords and links were 0.5–2.5 pages from the OS
// each with only the lookups prewarmed). Only with
// BENCH_PG_SHARED_BUFFERS: a default 128 MB would keep little of them.
func prewarm(s *models.Store) (int64, error) {
	db := s.DB()
	if err := db.Exec("CREATE EXTENSION IF NOT EXISTS pg_prewarm").Error; err != nil {
		return 0, fmt.Errorf("pg_prewarm: %w", err)
	}
	var rels []string
	if err := db.Raw(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i') AND NOT c.relname = ANY(?)
		ORDER BY pg_relation_size(c.oid)`, pqArray(lookupRelations)).Scan(&rels).Error; err != nil {
		return 0, fmt.Errorf("list relations: %w", err)
	}
	var total int64
	for _, rel := range append(rels, lookupRelations...) {
		var blocks int64
		if err := db.Raw("SELECT pg_prewarm(?::regclass)", rel).Scan(&blocks).Error; err != nil {
			return 0, fmt.Errorf("pg_prewarm %s: %w", rel, err)
		}
		total += blocks * 8192
	}
	return total, nil
}

// pqArray is names as a PostgreSQL text array literal.
func pqArray(names []string) string {
	return "{" + strings.Join(names, ",") + "}"
}
