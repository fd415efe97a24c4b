package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models/events"
)

// The store's feature packages (models/<feature>store, e.g.
// models/twofactorstore) keep a feature's tables and queries out of this
// package, on this Store's one connection pool. These accessors are what
// they need of it; the schema itself stays in models/schema.

// DB is the store's GORM handle, for the store's feature packages: their
// queries run on the same pool, dialect settings and error counting
// (Ready) as every query here.
func (s *Store) DB() *gorm.DB { return s.db }

// DBTime is dbTime for the store's feature packages: every time they write
// or compare must have the precision and zone this package's do.
func DBTime(t time.Time) time.Time { return dbTime(t) }

// Conflict is conflict for the store's feature packages: a unique
// constraint's failure becomes ErrConflict, as it does here.
func Conflict(err error) error { return conflict(err) }

// ResetPrefix begins a password reset link's identifier (the user's id
// follows): models/passwordstore writes these rows, the e-mail change and
// the account's deletion spend them.
const ResetPrefix = "password-reset:"

// The steps below are for the feature packages' own transactions (tx):
// each is the one this package's writes use, so that a feature's write
// proves an address, creates a user, stores a password or ends sessions
// exactly as every other does.

// ReleaseUnproved is releaseUnproved: the owner's proof takes the address
// from an unverified claimant (proof.go).
func ReleaseUnproved(tx *gorm.DB, email string) (bool, error) { return releaseUnproved(tx, email) }

// SetPasswordHashIn is SetPasswordHash inside tx.
func SetPasswordHashIn(tx *gorm.DB, userID, hash string) error {
	return setPasswordHash(tx, userID, hash)
}

// RevokeIn is RevokeSessions inside tx, without its event.
func RevokeIn(tx *gorm.DB, dialect, userID string, at time.Time) (int64, error) {
	return revoke(tx, dialect, userID, at)
}

// UserCreated is user.created for u, first signed in with provider.
func UserCreated(u *User, provider string) events.Event { return userCreated(u, provider) }

// SessionsEnded is session.ended for every session of userID signed in up
// to now, for reason.
func SessionsEnded(ctx context.Context, userID, reason string) events.Event {
	return sessionsEnded(ctx, userID, reason)
}
