package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// migration is one numbered schema change, written for each dialect. Steps
// are never edited once released: a change is a new step.
type migration struct {
	version  int
	name     string
	sqlite   []string
	postgres []string
}

// migrations is the schema's history. Version 1 is the schema that
// latchkey's earlier AutoMigrate created, so such SQLite files are adopted
// as version 1 and go on from there.
var migrations = []migration{
	{
		version: 1,
		name:    "users, accounts, sessions, verification_tokens",
		sqlite: []string{
			"CREATE TABLE IF NOT EXISTS `users` (`id` text,`name` text,`email` text,`email_verified` datetime,`image` text,`created_at` datetime,`updated_at` datetime,PRIMARY KEY (`id`))",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_users_email` ON `users`(`email`)",
			"CREATE TABLE IF NOT EXISTS `accounts` (`id` text,`user_id` text NOT NULL,`type` text NOT NULL,`provider` text NOT NULL,`provider_account_id` text NOT NULL,`refresh_token` text,`access_token` text,`expires_at` integer,`token_type` text,`scope` text,`id_token` text,`session_state` text,`created_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_accounts_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_accounts_provider_account` ON `accounts`(`provider`,`provider_account_id`)",
			"CREATE INDEX IF NOT EXISTS `idx_accounts_user_id` ON `accounts`(`user_id`)",
			"CREATE TABLE IF NOT EXISTS `sessions` (`id` text,`token_hash` text NOT NULL,`user_id` text NOT NULL,`expires` datetime NOT NULL,`created_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_sessions_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE INDEX IF NOT EXISTS `idx_sessions_expires` ON `sessions`(`expires`)",
			"CREATE INDEX IF NOT EXISTS `idx_sessions_user_id` ON `sessions`(`user_id`)",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_sessions_token_hash` ON `sessions`(`token_hash`)",
			"CREATE TABLE IF NOT EXISTS `verification_tokens` (`identifier` text,`token_hash` text,`expires` datetime NOT NULL,PRIMARY KEY (`identifier`,`token_hash`))",
			"CREATE INDEX IF NOT EXISTS `idx_verification_tokens_expires` ON `verification_tokens`(`expires`)",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_verification_identifier_token` ON `verification_tokens`(`identifier`,`token_hash`)",
		},
		postgres: []string{
			`CREATE TABLE users (id varchar(36) PRIMARY KEY, name text, email text, email_verified timestamptz,
				image text, created_at timestamptz, updated_at timestamptz)`,
			`CREATE UNIQUE INDEX idx_users_email ON users (email)`,
			`CREATE TABLE accounts (id varchar(36) PRIMARY KEY,
				user_id varchar(36) NOT NULL CONSTRAINT fk_accounts_user REFERENCES users(id) ON DELETE CASCADE,
				type text NOT NULL, provider text NOT NULL, provider_account_id text NOT NULL, refresh_token text,
				access_token text, expires_at bigint, token_type text, scope text, id_token text, session_state text,
				created_at timestamptz)`,
			`CREATE UNIQUE INDEX idx_accounts_provider_account ON accounts (provider, provider_account_id)`,
			`CREATE INDEX idx_accounts_user_id ON accounts (user_id)`,
			`CREATE TABLE sessions (id varchar(36) PRIMARY KEY, token_hash varchar(64) NOT NULL,
				user_id varchar(36) NOT NULL CONSTRAINT fk_sessions_user REFERENCES users(id) ON DELETE CASCADE,
				expires timestamptz NOT NULL, created_at timestamptz)`,
			`CREATE INDEX idx_sessions_expires ON sessions (expires)`,
			`CREATE INDEX idx_sessions_user_id ON sessions (user_id)`,
			`CREATE UNIQUE INDEX idx_sessions_token_hash ON sessions (token_hash)`,
			`CREATE TABLE verification_tokens (identifier text NOT NULL, token_hash varchar(64) NOT NULL,
				expires timestamptz NOT NULL, PRIMARY KEY (identifier, token_hash))`,
			`CREATE INDEX idx_verification_tokens_expires ON verification_tokens (expires)`,
			`CREATE UNIQUE INDEX idx_verification_identifier_token ON verification_tokens (identifier, token_hash)`,
		},
	},
	{
		version: 2,
		name:    "unique index on verification_tokens.token_hash",
		// Hashes are sha256(random token + secret), so two rows share one only
		// by a bug or a hand edit; the index could not be created over them.
		// Such a link is ambiguous (the callback cannot tell which address it
		// was sent to), so every row of a shared hash goes: its holder asks for
		// a new link.
		sqlite: []string{
			`DELETE FROM verification_tokens WHERE token_hash IN
				(SELECT token_hash FROM verification_tokens GROUP BY token_hash HAVING COUNT(*) > 1)`,
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_verification_tokens_token_hash` ON `verification_tokens`(`token_hash`)",
		},
		postgres: []string{
			`DELETE FROM verification_tokens WHERE token_hash IN
				(SELECT token_hash FROM verification_tokens GROUP BY token_hash HAVING COUNT(*) > 1)`,
			`CREATE UNIQUE INDEX idx_verification_tokens_token_hash ON verification_tokens (token_hash)`,
		},
	},
	{
		version: 3,
		name:    "rate_limits",
		// The e-mail rate limits' buckets, shared by every instance (see
		// RateLimit). No index on full_at: only allowed sends write rows (at
		// most one per tier per e-mail sent in a window), so the hourly purge
		// reads the whole small table cheaply, and without an index on the
		// column every take changes, PostgreSQL can update rows in place
		// (HOT). SQLite: WITHOUT ROWID, as the table is only ever reached by
		// its text key.
		sqlite: []string{
			"CREATE TABLE `rate_limits` (`bucket` text NOT NULL,`full_at` integer NOT NULL,PRIMARY KEY (`bucket`)) WITHOUT ROWID",
		},
		postgres: []string{
			`CREATE TABLE rate_limits (bucket text PRIMARY KEY, full_at bigint NOT NULL)`,
		},
	},
	{
		version: 4,
		name:    "session_revocations",
		// Per-user "not before" times of `latchkey sessions revoke` and
		// `users delete` (see SessionRevocation), which every instance polls
		// to refuse revoked JWT sessions. No foreign key: a deleted user's
		// row must outlive the user, and "*" is every user.
		sqlite: []string{
			"CREATE TABLE `session_revocations` (`user_id` text NOT NULL,`not_before` integer NOT NULL,PRIMARY KEY (`user_id`)) WITHOUT ROWID",
		},
		postgres: []string{
			`CREATE TABLE session_revocations (user_id text PRIMARY KEY, not_before bigint NOT NULL)`,
		},
	},
	{
		version: 5,
		name:    "passwords, password_throttles",
		// passwords: one Argon2id PHC string per user (see Password), in its
		// own table rather than a users column so that no read of users (the
		// session join, the admin listings, the JSON of a user) can carry a
		// hash by accident, and so a user has no password row at all until
		// one is set. password_throttles: the failure counters of password
		// sign-in (see PasswordThrottle), times in microseconds like
		// rate_limits.
		sqlite: []string{
			"CREATE TABLE `passwords` (`user_id` text NOT NULL,`hash` text NOT NULL,`updated_at` datetime NOT NULL,PRIMARY KEY (`user_id`),CONSTRAINT `fk_passwords_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE TABLE `password_throttles` (`bucket` text NOT NULL,`failures` integer NOT NULL,`blocked_until` integer NOT NULL,`expires` integer NOT NULL,PRIMARY KEY (`bucket`)) WITHOUT ROWID",
		},
		postgres: []string{
			`CREATE TABLE passwords (user_id varchar(36) PRIMARY KEY
				CONSTRAINT fk_passwords_user REFERENCES users(id) ON DELETE CASCADE,
				hash text NOT NULL, updated_at timestamptz NOT NULL)`,
			`CREATE TABLE password_throttles (bucket text PRIMARY KEY, failures integer NOT NULL,
				blocked_until bigint NOT NULL, expires bigint NOT NULL)`,
		},
	},
	{
		version: 6,
		name:    "authenticators, webauthn_challenges",
		// Passkeys (see Authenticator) and the WebAuthn challenges already
		// answered (see UsedChallenge), which make each challenge single-use
		// across instances until it expires.
		sqlite: []string{
			"CREATE TABLE `authenticators` (`id` text,`user_id` text NOT NULL,`credential_id` text NOT NULL,`public_key` blob NOT NULL,`sign_count` integer NOT NULL DEFAULT 0,`transports` text NOT NULL DEFAULT '',`backup_eligible` numeric NOT NULL DEFAULT false,`backup_state` numeric NOT NULL DEFAULT false,`aaguid` blob,`name` text NOT NULL DEFAULT '',`created_at` datetime,`last_used_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_authenticators_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE UNIQUE INDEX `idx_authenticators_credential_id` ON `authenticators`(`credential_id`)",
			"CREATE INDEX `idx_authenticators_user_id` ON `authenticators`(`user_id`)",
			"CREATE TABLE `webauthn_challenges` (`challenge_hash` text NOT NULL,`expires` integer NOT NULL,PRIMARY KEY (`challenge_hash`)) WITHOUT ROWID",
		},
		postgres: []string{
			`CREATE TABLE authenticators (id varchar(36) PRIMARY KEY,
				user_id varchar(36) NOT NULL CONSTRAINT fk_authenticators_user REFERENCES users(id) ON DELETE CASCADE,
				credential_id text NOT NULL, public_key bytea NOT NULL, sign_count bigint NOT NULL DEFAULT 0,
				transports text NOT NULL DEFAULT '', backup_eligible boolean NOT NULL DEFAULT false,
				backup_state boolean NOT NULL DEFAULT false, aaguid bytea, name text NOT NULL DEFAULT '',
				created_at timestamptz, last_used_at timestamptz)`,
			`CREATE UNIQUE INDEX idx_authenticators_credential_id ON authenticators (credential_id)`,
			`CREATE INDEX idx_authenticators_user_id ON authenticators (user_id)`,
			`CREATE TABLE webauthn_challenges (challenge_hash text PRIMARY KEY, expires bigint NOT NULL)`,
		},
	},
	{
		version: 7,
		name:    "password_signups",
		// The password chosen at a sign-up whose address is not confirmed
		// yet (see PasswordSignUp): no user row exists until it is. The
		// link's token is a verification_tokens row; this one goes with it
		// (ON DELETE CASCADE), so spending, deleting or purging the token
		// removes the pending password too.
		sqlite: []string{
			"CREATE TABLE `password_signups` (`token_hash` text NOT NULL,`password_hash` text NOT NULL,PRIMARY KEY (`token_hash`),CONSTRAINT `fk_password_signups_token` FOREIGN KEY (`token_hash`) REFERENCES `verification_tokens`(`token_hash`) ON DELETE CASCADE) WITHOUT ROWID",
		},
		postgres: []string{
			`CREATE TABLE password_signups (token_hash varchar(64) PRIMARY KEY
				CONSTRAINT fk_password_signups_token REFERENCES verification_tokens(token_hash) ON DELETE CASCADE,
				password_hash text NOT NULL)`,
		},
	},
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int {
	v := 0
	for _, m := range migrations {
		v = max(v, m.version)
	}
	return v
}

// Versions are the versions of the steps, in order. A version may be left
// out (a step still on another branch): steps are found by version, not by
// their place in the list.
func Versions() []int {
	out := make([]int, 0, len(migrations))
	for _, m := range migrations {
		out = append(out, m.version)
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
				return tx.Create(&schemaMigration{Version: 1, Name: migrations[0].name + " (adopted)", AppliedAt: time.Now().UTC()}).Error
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
	stmts := m.sqlite
	if s.dialect == DialectPostgres {
		stmts = m.postgres
	}
	err := conn.Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&schemaMigration{}).Where("version = ?", m.version).Count(&n).Error; err != nil {
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
		return tx.Create(&schemaMigration{Version: m.version, Name: m.name, AppliedAt: time.Now().UTC()}).Error
	})
	if err != nil {
		return fmt.Errorf("migrate: step %d (%s): %w", m.version, m.name, err)
	}
	return nil
}

// Status reports the applied version and the pending steps, changing nothing.
func (s *Store) Status(ctx context.Context) (MigrationStatus, error) {
	st := MigrationStatus{Latest: SchemaVersion()}
	db := s.db.WithContext(ctx)
	if !db.Migrator().HasTable(&schemaMigration{}) {
		for _, m := range migrations {
			st.Pending = append(st.Pending, fmt.Sprintf("%d %s", m.version, m.name))
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
		if !done[m.version] {
			st.Pending = append(st.Pending, fmt.Sprintf("%d %s", m.version, m.name))
		}
	}
	return st, nil
}
