package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/models/events"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// CreateVerificationToken stores a pending e-mail sign-in. Only the hash of
// the token is stored; the token itself travels in the e-mail.
func (s *Store) CreateVerificationToken(ctx context.Context, identifier, tokenHash string, expires time.Time) error {
	row := VerificationToken{Identifier: identifier, TokenHash: tokenHash, Expires: dbTime(expires)}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("create verification token: %w", conflict(err))
	}
	return nil
}

// IdentifiersFrom is the half-open range [from, to) of the identifiers
// that start with prefix, in byte order: "identifier >= from AND
// identifier < to" finds them on the identifier index in both dialects
// (PostgreSQL's column is COLLATE "C" since schema step 18), where a LIKE
// reads the whole table. prefix ends in a byte below 0xff (":").
func IdentifiersFrom(prefix string) (from, to string) {
	b := []byte(prefix)
	b[len(b)-1]++
	return prefix, string(b)
}

// DeleteVerificationToken removes a pending sign-in, e.g. when its e-mail
// could not be sent; a missing row is not an error.
func (s *Store) DeleteVerificationToken(ctx context.Context, identifier, tokenHash string) error {
	err := s.db.WithContext(ctx).
		Where("identifier = ? AND token_hash = ?", identifier, tokenHash).
		Delete(&VerificationToken{}).Error
	if err != nil {
		return fmt.Errorf("delete verification token: %w", err)
	}
	return nil
}

// VerificationTokenByHash looks a token up without consuming it, expired or
// not, so the caller can tell the operator why a link failed and ask the
// SignIn hook before anything is written.
func (s *Store) VerificationTokenByHash(ctx context.Context, tokenHash string) (*VerificationToken, error) {
	var row VerificationToken
	err := s.db.WithContext(ctx).Where("token_hash = ?", tokenHash).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find verification token: %w", err)
	}
	return &row, nil
}

// RedeemVerificationToken consumes an unexpired token for identifier and
// marks the address verified, creating its user when there is none (or
// when the link's proof takes the address from an unverified claimant: see
// releaseUnproved), all in one transaction: of two concurrent redemptions exactly one gets the user
// (the other ErrNotFound), and a failure after the delete rolls the token
// back so the link still works. isNew reports a created user. Its event
// is user.created for a new user, user.updated for a first verification.
func (s *Store) RedeemVerificationToken(ctx context.Context, identifier, tokenHash string, now time.Time) (u *User, isNew bool, err error) {
	now = dbTime(now)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var consumed []string
		q := tx.Raw(`DELETE FROM verification_tokens
			WHERE identifier = ? AND token_hash = ? AND expires > ?
			RETURNING identifier`, identifier, tokenHash, now).Scan(&consumed)
		if q.Error != nil {
			return fmt.Errorf("consume verification token: %w", q.Error)
		}
		if len(consumed) == 0 {
			return ErrNotFound
		}
		if _, err := releaseUnproved(tx, identifier); err != nil {
			return err
		}
		var unverified int64 // only asked when someone is told of it
		if s.Wants(events.UserUpdated) {
			if err := tx.Model(&User{}).Where("email = ? AND email_verified IS NULL", identifier).Count(&unverified).Error; err != nil {
				return fmt.Errorf("read user: %w", err)
			}
		}
		if u, isNew, err = verifyEmail(tx, identifier, now); err != nil {
			return err
		}
		switch {
		case isNew:
			return s.Emit(tx, userCreated(u, "email"))
		case unverified > 0:
			return s.Emit(tx, events.Event{Type: events.UserUpdated, Data: events.UserChange{User: EventUser(u), Changes: []string{"email_verified"}}})
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return u, isNew, nil
}

// verifyEmail sets emailVerified on the user with this address, or creates
// one, inside tx. A returning user, the common case, costs one statement
// (UPDATE ... RETURNING, where a look-up and an update were two). Another
// instance redeeming another link for the same new address may create that
// user between the update and the insert (on PostgreSQL the two
// transactions run side by side; SQLite's write lock queues them): the
// insert then yields to the row the other one committed and this sign-in
// goes on into that user, instead of failing on the unique e-mail.
func verifyEmail(tx *gorm.DB, email string, now time.Time) (*User, bool, error) {
	u, err := setEmailVerified(tx, email, now)
	if err != nil || u != nil {
		return u, false, err
	}
	addr := email
	created := User{ID: NewID(), Email: &addr, EmailVerified: &now}
	r := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "email"}}, DoNothing: true}).Create(&created)
	if r.Error != nil {
		return nil, false, fmt.Errorf("create user: %w", conflict(r.Error))
	}
	if r.RowsAffected == 1 {
		return &created, true, nil
	}
	if u, err = setEmailVerified(tx, email, now); err == nil && u == nil {
		err = fmt.Errorf("find user: %w", ErrNotFound)
	}
	return u, false, err
}

// setEmailVerified stamps the user with this address as verified now and
// returns it; nil when there is none.
func setEmailVerified(tx *gorm.DB, email string, now time.Time) (*User, error) {
	var users []User
	err := tx.Raw(`UPDATE users SET email_verified = ? WHERE email = ? RETURNING *`, now, email).Scan(&users).Error
	if err != nil {
		return nil, fmt.Errorf("set emailVerified: %w", err)
	}
	if len(users) == 0 {
		return nil, nil
	}
	return &users[0], nil
}
