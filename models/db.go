package models

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Store wraps the database; every query latchkey makes is a method on it.
type Store struct {
	db          *gorm.DB
	sessionStmt *sql.Stmt // prepared once: GET /session's lookup
}

// Open opens (creating if needed) the SQLite file at path with WAL and a busy
// timeout, so concurrent requests wait instead of failing with "database is
// locked", and applies the schema. path is a file name, taken literally:
// "#", "?" and "%" in it are part of the name.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open database: no file name")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	// The database holds users and tokens: create it private (SQLite gives
	// its -wal and -shm files the same mode).
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
	dsn := uri + "?mode=rw&_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{
		Logger:                 logger.Discard,
		PrepareStmt:            true,
		SkipDefaultTransaction: true,
		// Constraint failures come back as gorm.ErrDuplicatedKey and
		// gorm.ErrForeignKeyViolated, whatever the driver's wording.
		TranslateError: true,
	})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db}
	if err := s.Migrate(); err != nil {
		_ = s.Close()
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("database handle: %w", err)
	}
	if s.sessionStmt, err = sqlDB.Prepare(sessionAndUserSQL); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("prepare session lookup: %w", err)
	}
	return s, nil
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

// Migrate applies the schema. AutoMigrate only adds tables, columns and
// indexes and never drops data, which suits a schema this small; see README.
func (s *Store) Migrate() error {
	if err := s.dropAmbiguousVerificationTokens(); err != nil {
		return err
	}
	if err := s.db.AutoMigrate(&User{}, &Account{}, &Session{}, &VerificationToken{}); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return nil
}

// tokenHashIndex is the unique index on verification_tokens.token_hash.
const tokenHashIndex = "idx_verification_tokens_token_hash"

// dropAmbiguousVerificationTokens prepares a database made before token_hash
// had its own unique index, which AutoMigrate then adds. Hashes are
// sha256(random token + secret), so two rows share one only by a bug or a
// hand edit; the index could not be created over them and latchkey would
// not start. Such a link is ambiguous (the callback cannot tell which
// address it was sent to), so every row of a shared hash is deleted rather
// than one kept: its holder asks for a new link. Once the index exists
// this does nothing, so it costs one scan on the first start only.
func (s *Store) dropAmbiguousVerificationTokens() error {
	m := s.db.Migrator()
	if !m.HasTable(&VerificationToken{}) || m.HasIndex(&VerificationToken{}, tokenHashIndex) {
		return nil
	}
	err := s.db.Exec(`DELETE FROM verification_tokens WHERE token_hash IN
		(SELECT token_hash FROM verification_tokens GROUP BY token_hash HAVING COUNT(*) > 1)`).Error
	if err != nil {
		return fmt.Errorf("migrate schema: drop verification tokens sharing a hash: %w", err)
	}
	return nil
}

// Close releases the database.
func (s *Store) Close() error {
	if s.sessionStmt != nil {
		_ = s.sessionStmt.Close()
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return sqlDB.Close()
}
