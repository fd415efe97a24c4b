package models

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

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
// locked", and applies the schema.
func Open(path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create database folder: %w", err)
		}
	}
	// The database holds users and tokens: create it private (SQLite gives
	// its -wal and -shm files the same mode).
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		_ = f.Close()
	}
	// _txlock=immediate takes the write lock at BEGIN, so two writers queue
	// on the busy timeout instead of deadlocking on a lock upgrade.
	dsn := "file:" + path + "?_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate"
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
