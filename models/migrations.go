package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models/schema"
)

// migrations is the schema's history (app's models/schema); migration is
// one of its steps.
var migrations = schema.Steps

type migration = schema.Step

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int {
	v := 0
	for _, m := range migrations {
		v = max(v, m.Version)
	}
	return v
}

// Versions are the versions of the steps, in order. A version may be left
// out (a step still on another branch): steps are found by version, not by
// their place in the list.
func Versions() []int {
	out := make([]int, 0, len(migrations))
	for _, m := range migrations {
		out = append(out, m.Version)
	}
	return out
}

// ErrSchemaTooNew is returned when the database was migrated by a newer
// latchkey: this binary would misread it.
var ErrSchemaTooNew = errors.New("the database schema is newer than this latchkey")

// MigrationStatus is the schema's state: the version applied and the steps
// still pending.
type MigrationStatus struct {
	Applied int
	Latest  int
	Pending []string // "N name" of each step not yet applied
}

// schemaMigration is one applied step.
type schemaMigration struct {
	Version   int       `gorm:"primaryKey;autoIncrement:false"`
	Name      string    `gorm:"not null"`
	AppliedAt time.Time `gorm:"not null"`
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// advisoryLockKey is the PostgreSQL advisory lock that serialises
// migrations of every latchkey instance on one database.
const advisoryLockKey = 0x6c61746368 // "latch"

// Migrate applies every pending step, each in its own transaction with its
// version row, under a lock that several instances starting at once share
// (a PostgreSQL advisory lock; SQLite's write lock, taken at BEGIN). It
// refuses a schema newer than this binary knows.
func (s *Store) Migrate(ctx context.Context) error {
	return s.db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		// A fresh statement per call on this one connection (Connection's
		// handle would otherwise carry clauses from one query to the next).
		conn = conn.Session(&gorm.Session{NewDB: true})
		if s.dialect == DialectPostgres {
			if err := conn.Exec("SELECT pg_advisory_lock(?)", advisoryLockKey).Error; err != nil {
				return fmt.Errorf("migrate: take the migration lock: %w", err)
			}
			defer conn.Exec("SELECT pg_advisory_unlock(?)", advisoryLockKey)
		}
		if err := s.prepareHistory(conn); err != nil {
			return err
		}
		for _, m := range migrations {
			if err := s.apply(conn, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// prepareHistory creates schema_migrations, adopts a database made by the
// earlier AutoMigrate (its tables exist, its history does not) as version
// 1, and refuses a newer schema.
func (s *Store) prepareHistory(conn *gorm.DB) error {
	m := conn.Migrator()
	if !m.HasTable(&schemaMigration{}) {
		adopt := m.HasTable(&User{})
		err := conn.Transaction(func(tx *gorm.DB) error {
			if err := tx.Migrator().CreateTable(&schemaMigration{}); err != nil {
				return err
			}
			if adopt {
				return tx.Create(&schemaMigration{Version: 1, Name: migrations[0].Name + " (adopted)", AppliedAt: time.Now().UTC()}).Error
			}
			return nil
		})
		// Another instance may have created it first: go on and read it.
		if err != nil && !m.HasTable(&schemaMigration{}) {
			return fmt.Errorf("migrate: create schema_migrations: %w", err)
		}
	}
	var newest int
	if err := conn.Model(&schemaMigration{}).Select("COALESCE(MAX(version), 0)").Scan(&newest).Error; err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	if newest > SchemaVersion() {
		return fmt.Errorf("%w: it is at version %d, this binary knows up to %d; run the newer latchkey (or restore a backup)", ErrSchemaTooNew, newest, SchemaVersion())
	}
	return nil
}

// apply runs one step unless it is recorded, in one transaction with its
// version row, re-checked inside the transaction so that two processes
// racing for it apply it once.
func (s *Store) apply(conn *gorm.DB, m migration) error {
	stmts := m.SQLite
	if s.dialect == DialectPostgres {
		stmts = m.Postgres
	}
	err := conn.Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&schemaMigration{}).Where("version = ?", m.Version).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		for _, stmt := range stmts {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		return tx.Create(&schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC()}).Error
	})
	if err != nil {
		return fmt.Errorf("migrate: step %d (%s): %w", m.Version, m.Name, err)
	}
	return nil
}

// Status reports the applied version and the pending steps, changing nothing.
func (s *Store) Status(ctx context.Context) (MigrationStatus, error) {
	st := MigrationStatus{Latest: SchemaVersion()}
	db := s.db.WithContext(ctx)
	if !db.Migrator().HasTable(&schemaMigration{}) {
		for _, m := range migrations {
			st.Pending = append(st.Pending, fmt.Sprintf("%d %s", m.Version, m.Name))
		}
		return st, nil
	}
	var applied []int
	if err := db.Model(&schemaMigration{}).Order("version").Pluck("version", &applied).Error; err != nil {
		return st, fmt.Errorf("read schema_migrations: %w", err)
	}
	done := map[int]bool{}
	for _, v := range applied {
		done[v] = true
		st.Applied = max(st.Applied, v)
	}
	for _, m := range migrations {
		if !done[m.Version] {
			st.Pending = append(st.Pending, fmt.Sprintf("%d %s", m.Version, m.Name))
		}
	}
	return st, nil
}
