package models

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/models/events"
	"github.com/latchkey-auth/latchkey/models/onerow"
	"gorm.io/gorm"
)

// AllUsers is the user id of the revocation that ends every user's sessions.
const AllUsers = "*"

// SessionRevocation is a "not before" time: a session of the user (of
// everyone, for AllUsers) signed in before it has ended. Database sessions
// are deleted when the row is written; JWT sessions live in cookies, so
// every instance polls this table (app/revocations.go) and refuses tokens
// whose sign-in time is earlier.
type SessionRevocation struct {
	UserID string `gorm:"primaryKey"`
	// NotBefore is in Unix seconds, the precision of a JWT's auth_time.
	NotBefore int64 `gorm:"not null"`
}

// TableName is session_revocations.
func (SessionRevocation) TableName() string { return "session_revocations" }

// notBefore is the revocation second of at, rounded up: a session signed in
// during the same second as the revocation (auth_time keeps whole seconds,
// so it cannot be told apart from one signed in just before) ends too. A
// revocation fails closed; signing in again works from the next second on.
func notBefore(at time.Time) int64 {
	sec := at.Unix()
	if at.Nanosecond() > 0 {
		sec++
	}
	return sec
}

// Revocations returns every revocation, for the instances' poll: one
// read of a table that holds a row per revoked user (purged once no session
// it could end is left, see PurgeRevocations) and one for AllUsers.
func (s *Store) Revocations(ctx context.Context) ([]SessionRevocation, error) {
	var out []SessionRevocation
	if err := s.db.WithContext(ctx).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("read session revocations: %w", err)
	}
	return out, nil
}

// RevocationDigest summarises session_revocations for the instances' poll:
// any insert, delete or update changes it, since an update only moves a
// row's NotBefore forward (revoke never moves it back), so the poll reads
// the rows only when it changed. One aggregate over the primary key,
// instead of every row into the process every second.
type RevocationDigest struct{ Rows, SumNotBefore int64 }

// RevocationsDigest is the table's RevocationDigest.
func (s *Store) RevocationsDigest(ctx context.Context) (RevocationDigest, error) {
	var d RevocationDigest
	err := onerow.Scan(s.db.WithContext(ctx).Raw("SELECT count(*), COALESCE(SUM(not_before), 0) FROM session_revocations"),
		&d.Rows, &d.SumNotBefore)
	if err != nil {
		return d, fmt.Errorf("read session revocations' digest: %w", err)
	}
	return d, nil
}

// RevokeSessions ends every session of userID (AllUsers: of everyone)
// signed in up to at, in one transaction: the database sessions' rows are
// deleted, and the "not before" time is recorded (never moved back) for the
// JWT sessions, with its session.ended (scope "all"; user_id "*" for
// everyone). It returns the number of database sessions deleted.
func (s *Store) RevokeSessions(ctx context.Context, userID string, at time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if n, err = revoke(tx, s.dialect, userID, at); err != nil {
			return err
		}
		reason := events.ReasonSignOutEverywhere // the user's own "sign out everywhere"
		if events.ActorOf(ctx) == events.ActorAdmin {
			reason = events.ReasonRevoked
		}
		return s.Emit(tx, sessionsEnded(ctx, userID, reason))
	})
	if err != nil {
		return 0, fmt.Errorf("revoke sessions: %w", err)
	}
	return n, nil
}

// revoke is RevokeSessions inside tx.
func revoke(tx *gorm.DB, dialect, userID string, at time.Time) (int64, error) {
	q := tx.Session(&gorm.Session{AllowGlobalUpdate: true})
	if userID != AllUsers {
		q = q.Where("user_id = ?", userID)
	}
	r := q.Delete(&Session{})
	if r.Error != nil {
		return 0, r.Error
	}
	greatest := "MAX" // SQLite's two-argument MAX is PostgreSQL's GREATEST
	if dialect == DialectPostgres {
		greatest = "GREATEST"
	}
	err := tx.Exec(`INSERT INTO session_revocations (user_id, not_before) VALUES (?, ?)
		ON CONFLICT (user_id) DO UPDATE SET not_before = `+greatest+`(session_revocations.not_before, excluded.not_before)`,
		userID, notBefore(at)).Error
	if err != nil {
		return 0, fmt.Errorf("record revocation: %w", err)
	}
	return r.RowsAffected, nil
}

// PurgeRevocations deletes the revocations older than before, which no
// session can outlive any more (the caller picks before from the session
// lifetimes).
func (s *Store) PurgeRevocations(ctx context.Context, before time.Time) (int64, error) {
	r := s.db.WithContext(ctx).Where("not_before < ?", before.Unix()).Delete(&SessionRevocation{})
	if r.Error != nil {
		return 0, fmt.Errorf("purge session revocations: %w", r.Error)
	}
	return r.RowsAffected, nil
}
