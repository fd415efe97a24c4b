package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models/events"
	"github.com/latchkey-auth/latchkey/models/sqlitefile"
	"github.com/latchkey-auth/latchkey/models/stmtcache"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialects latchkey stores its data in.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Store wraps the database; every query on the shared tables is a method on
// it. A feature's own tables have their queries in models/<feature>store,
// on this Store's handle (DB).
type Store struct {
	db          *gorm.DB
	dialect     string
	sessionStmt *sql.Stmt        // prepared once: GET /session's lookup
	stmts       *stmtcache.Cache // Statements: prepared reads that bypass GORM
	file        *sqlitefile.File // SQLite: the file opened, for Ready
	onError     func()           // Config.OnError
	outbox      events.Outbox
}

// ErrNoAnswer is returned by Connect when the database cannot be reached
// (down, wrong address, refused login), so the caller can say what to check.
var ErrNoAnswer = errors.New("database does not answer")

// Config says which database to open and how to pool its connections.
type Config struct {
	Dialect string // DialectSQLite (default) or DialectPostgres
	// DSN is the SQLite file name (taken literally: "#", "?" and "%" are
	// part of it) or the PostgreSQL URL or key=value string.
	DSN string
	// Pool limits; zero means the dialect's default.
	MaxOpen         int
	MaxIdle         int
	ConnMaxLifetime time.Duration
	// ConnMaxIdleTime closes a connection left idle this long, so that
	// the connections a burst opened are given back (PostgreSQL: 5 min
	// by default; SQLite keeps its connections unless it is set).
	ConnMaxIdleTime time.Duration
	// StatementTimeout bounds every PostgreSQL statement, so a stuck
	// database cannot hang a request for ever; zero means 10 s.
	StatementTimeout time.Duration
	// SkipMigrate opens the database as it is (for `latchkey migrate status`).
	SkipMigrate bool
	// OnError, when set, is called for every statement the database fails
	// (see countFailure): the service's latchkey_db_errors_total.
	OnError func()
	// Outbox, when set, receives every account event in the transaction
	// of its change (emit.go); nil reports nothing.
	Outbox events.Outbox
}

// Open opens (creating if needed) the SQLite file at path with the defaults
// and applies the schema.
func Open(path string) (*Store, error) { return Connect(Config{Dialect: DialectSQLite, DSN: path}) }

// Connect opens the configured database, applies pending migrations
// (unless SkipMigrate) and prepares GET /session's query.
func Connect(c Config) (*Store, error) {
	var (
		dialector gorm.Dialector
		err       error
	)
	switch c.Dialect {
	case DialectPostgres:
		if dialector, err = postgresDialector(withStatementTimeout(c.DSN, c.StatementTimeout)); err != nil {
			return nil, err
		}
	case DialectSQLite, "":
		c.Dialect = DialectSQLite
		if dialector, err = sqliteDialector(c.DSN); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("open database: unknown dialect %q", c.Dialect)
	}
	db, err := gorm.Open(dialector, &gorm.Config{
		Logger:                 logger.Discard,
		NowFunc:                dbNow,
		PrepareStmt:            true,
		SkipDefaultTransaction: true,
		// Constraint failures come back as gorm.ErrDuplicatedKey and
		// gorm.ErrForeignKeyViolated, whatever the driver's wording.
		TranslateError: true,
		// Pinged below, with a time limit.
		DisableAutomaticPing: true,
	})
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", c.Dialect, err)
	}
	s := &Store{db: db, dialect: c.Dialect, outbox: c.Outbox}
	sqlDB, err := db.DB()
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("database handle: %w", err)
	}
	applyPool(sqlDB, c)
	if err := s.watchErrors(c.OnError); err != nil {
		_ = s.Close()
		return nil, err
	}
	if c.Dialect == DialectSQLite {
		if s.file, err = sqlitefile.Stat(c.DSN); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Ping(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("%s %w: %w", c.Dialect, ErrNoAnswer, err)
	}
	s.stmts = stmtcache.New(sqlDB, s.dialect == DialectSQLite)
	if c.SkipMigrate { // a store for `migrate status` only: it serves no requests
		return s, nil
	}
	if err := s.Migrate(context.Background()); err != nil {
		_ = s.Close()
		return nil, err
	}
	if s.sessionStmt, err = sqlDB.Prepare(s.sessionAndUserSQL("")); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("prepare session lookup: %w", err)
	}
	return s, nil
}

// Dialect is DialectSQLite or DialectPostgres.
func (s *Store) Dialect() string { return s.dialect }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("database handle: %w", err)
	}
	return sqlDB.PingContext(ctx)
}

func applyPool(db *sql.DB, c Config) {
	maxOpen, maxIdle, life, idleTime := c.MaxOpen, c.MaxIdle, c.ConnMaxLifetime, c.ConnMaxIdleTime
	switch c.Dialect {
	case DialectPostgres:
		// A budget that several instances can share within PostgreSQL's
		// default max_connections of 100. Every open connection is kept
		// while it is in use at least every few minutes: with fewer kept
		// idle than open, a steady load whose concurrency crosses the idle
		// count closes a connection at each dip and opens one at each rise,
		// and each opening is a new PostgreSQL backend (fork, login,
		// catalog caches). Measured with 16 clients on GET /session: one
		// new backend per ~90 requests, 6 500–9 300 req/s against
		// 11 200–13 900 with none (issue #36, twelfth session).
		maxOpen, life = positive(maxOpen, 20), positiveDuration(life, 30*time.Minute)
		maxIdle, idleTime = positive(maxIdle, maxOpen), positiveDuration(idleTime, 5*time.Minute)
	default:
		// SQLite runs in this process: connections beyond a few per core
		// add only page caches, and with Go's default of two idle ones a
		// burst of requests opens and closes files all the time. Keep a
		// small, fixed set open.
		maxOpen = positive(maxOpen, 8)
		maxIdle = positive(maxIdle, maxOpen)
	}
	if maxOpen > 0 {
		db.SetMaxOpenConns(maxOpen)
	}
	if maxIdle > 0 {
		db.SetMaxIdleConns(maxIdle)
	}
	if life > 0 {
		db.SetConnMaxLifetime(life)
	}
	if idleTime > 0 {
		db.SetConnMaxIdleTime(idleTime)
	}
}

func positive(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func positiveDuration(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// withStatementTimeout adds PostgreSQL's statement_timeout (a run-time
// parameter pgx passes on) and pgx's connect_timeout (5 s, so a database
// host that silently drops packets fails a connection attempt instead of
// holding it for the operating system's TCP time-out) unless the DSN sets
// them.
func withStatementTimeout(dsn string, d time.Duration) string {
	ms := positiveDuration(d, 10*time.Second).Milliseconds()
	for _, p := range []struct{ key, value string }{
		{"statement_timeout", fmt.Sprint(ms)},
		{"connect_timeout", "5"},
	} {
		if strings.Contains(dsn, p.key) {
			continue
		}
		if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			dsn = dsn + sep + p.key + "=" + p.value
		} else {
			dsn = dsn + " " + p.key + "=" + p.value
		}
	}
	return dsn
}

// sqliteDialector opens the SQLite file at path with WAL and a busy
// timeout, so concurrent requests wait instead of failing with "database is
// locked".
func sqliteDialector(path string) (gorm.Dialector, error) {
	if path == "" {
		return nil, errors.New("open database: no file name")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	// The database holds users and tokens: create it private (SQLite gives
	// its -wal and -shm files the same mode). This descriptor is closed
	// before SQLite opens the file, so it drops no lock of this process;
	// once SQLite has it open, nothing here may open and close it again
	// (see sqlitefile.File.Intact).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	_ = f.Close()
	uri, err := fileURI(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// mode=rw: SQLite opens the file made above and never creates one
	// itself, so a name it read differently would fail here instead of
	// silently becoming another file with the umask's mode.
	// _txlock=immediate takes the write lock at BEGIN, so two writers queue
	// on the busy timeout instead of deadlocking on a lock upgrade.
	return sqlite.Open(uri + "?mode=rw&_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate"), nil
}

// fileURI returns the SQLite URI (https://sqlite.org/uri.html) naming
// exactly the file at path. In a URI SQLite ends the name at "?" or "#" and
// decodes "%XX", so every byte but unreserved ones and "/" is %-escaped;
// the driver, which splits its own options at the first "?", then sees none
// in the name either. The path is made absolute so no name can be read as
// a URI authority ("file://host/...").
func fileURI(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("absolute path: %w", err)
	}
	name := filepath.ToSlash(abs)
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '/' || c == '-' || c == '.' || c == '_' || c == '~',
			'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String(), nil
}

// Close releases the database.
func (s *Store) Close() error {
	if s.sessionStmt != nil {
		_ = s.sessionStmt.Close()
	}
	if s.stmts != nil {
		s.stmts.Close()
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return sqlDB.Close()
}
