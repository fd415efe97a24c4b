package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/latchkey-auth/latchkey/models/events"
)

// SignInWays are the ways a user has to sign in, as stored: whether each
// is offered is the configuration's (signin.WaysOffered decides).
type SignInWays struct {
	Email         string // "" when none
	EmailVerified bool
	Accounts      int64 // linked OAuth identities
	Passkeys      int64
	Password      bool
}

// RemoveSignInWay runs remove (deleting one way in: a passkey, a linked
// identity) and keep, which gets the ways left and refuses to leave the
// user none, in one transaction that first locks the user's row: FOR
// UPDATE on PostgreSQL; SQLite's transactions here are BEGIN IMMEDIATE, so
// the database is the writer's already. Every removal of a way in goes
// through here, so of two at once (the last passkey and the last identity)
// the second waits for the first to commit and then reads its deletion
// (each statement after the lock sees it, in READ COMMITTED): they cannot
// both count on the other. Locking the user before the rows also keeps
// the order a deletion of the user takes, so the two never deadlock.
// remove may read the ways before it (ways); its events are emitted once
// keep agrees; keep's error, or remove's, undoes everything. A user that
// is gone is ErrNotFound.
func (s *Store) RemoveSignInWay(ctx context.Context, userID string, remove func(tx *gorm.DB, ways func() (SignInWays, error)) ([]events.Event, error), keep func(left SignInWays) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Model(&User{}).Select("email", "email_verified").Where("id = ?", userID)
		if s.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		var u User
		if err := q.Take(&u).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrNotFound
			}
			return fmt.Errorf("lock the user: %w", err)
		}
		evs, err := remove(tx, func() (SignInWays, error) { return signInWays(tx, &u, userID) })
		if err != nil {
			return err
		}
		left, err := signInWays(tx, &u, userID)
		if err != nil {
			return err
		}
		if err := keep(left); err != nil {
			return err
		}
		return s.Emit(tx, evs...)
	})
}

// signInWays are the ways u (its address read already) has left, read in tx.
func signInWays(tx *gorm.DB, u *User, userID string) (SignInWays, error) {
	w := SignInWays{EmailVerified: u.EmailVerified != nil}
	if u.Email != nil {
		w.Email = *u.Email
	}
	if err := tx.Model(&Account{}).Where("user_id = ?", userID).Count(&w.Accounts).Error; err != nil {
		return w, fmt.Errorf("count the user's accounts: %w", err)
	}
	if err := tx.Model(&Authenticator{}).Where("user_id = ?", userID).Count(&w.Passkeys).Error; err != nil {
		return w, fmt.Errorf("count the user's passkeys: %w", err)
	}
	var pw int64
	if err := tx.Model(&Password{}).Where("user_id = ?", userID).Count(&pw).Error; err != nil {
		return w, fmt.Errorf("look up the user's password: %w", err)
	}
	w.Password = pw > 0
	return w, nil
}
