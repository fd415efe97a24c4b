package twofactorstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

// The two-factor store. Several instances serve one database, and a code
// must be accepted at most once however many of them see it: every write
// that decides something is one conditional statement whose RowsAffected
// says whether it won, and writes of several rows are one transaction.

// TwoFactorOf returns the user's two-factor row, confirmed or not;
// models.ErrNotFound when the user has none.
func (s *Store) TwoFactorOf(ctx context.Context, userID string) (*TwoFactor, error) {
	var tf TwoFactor
	err := s.db().WithContext(ctx).Where("user_id = ?", userID).Take(&tf).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find two-factor: %w", err)
	}
	return &tf, nil
}

// beginTwoFactorSQL inserts an unconfirmed row or overwrites the user's
// unconfirmed one, in one statement (so two enrolments begun at once do
// not fail on each other's insert); the WHERE leaves a confirmed row as it
// is, which RowsAffected 0 tells. Both dialects read it alike (SQLite
// 3.24+ upsert).
const beginTwoFactorSQL = `INSERT INTO two_factors
	(user_id, secret, confirmed_at, last_step, failures, blocked_until, device_key, created_at, updated_at)
	VALUES (?, ?, NULL, 0, 0, NULL, ?, ?, ?)
	ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, last_step = 0, failures = 0,
	blocked_until = NULL, device_key = excluded.device_key, created_at = excluded.created_at,
	updated_at = excluded.updated_at
	WHERE two_factors.confirmed_at IS NULL`

// BeginTwoFactor stores an unconfirmed row (sealedSecret is sealed by the
// caller; deviceKey fresh), replacing an unconfirmed one of the user: an
// enrolment started again starts over with the new secret. models.ErrConflict,
// nothing written, when the user has a confirmed one: it must be turned
// off first.
func (s *Store) BeginTwoFactor(ctx context.Context, userID, sealedSecret, deviceKey string, now time.Time) error {
	at := models.DBTime(now)
	r := s.db().WithContext(ctx).Exec(beginTwoFactorSQL, userID, sealedSecret, deviceKey, at, at)
	if r.Error != nil {
		return fmt.Errorf("begin two-factor: %w", r.Error)
	}
	if r.RowsAffected == 0 {
		return fmt.Errorf("begin two-factor: %w: the user has two-factor on", models.ErrConflict)
	}
	return nil
}

// ConfirmTwoFactor puts the user's unconfirmed row whose secret is still
// pending in force (secret sealedSecret, confirmed_at now, last_step step:
// the code that confirmed it cannot be used again; failures and backoff
// cleared) and replaces the user's recovery codes with rows of codeHashes,
// in one transaction. false, nothing written, when the user has no such
// row (none, confirmed meanwhile by another request, or begun again with
// another secret: a code of the replaced one confirms nothing).
func (s *Store) ConfirmTwoFactor(ctx context.Context, userID, pending, sealedSecret string, step int64, codeHashes []string, now time.Time) (bool, error) {
	var ok bool
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		at := models.DBTime(now)
		r := tx.Model(&TwoFactor{}).Where("user_id = ? AND confirmed_at IS NULL AND secret = ?", userID, pending).
			Updates(map[string]any{"secret": sealedSecret, "confirmed_at": at, "last_step": step, "failures": 0, "blocked_until": nil, "updated_at": at})
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		ok = true
		if err := replaceCodes(tx, userID, codeHashes, at); err != nil {
			return err
		}
		return s.store.Emit(tx, events.Event{Type: events.TwoFactorOn, Data: events.Subject{UserID: userID, Method: "totp"}})
	})
	if err != nil {
		return false, fmt.Errorf("confirm two-factor: %w", err)
	}
	return ok, nil
}

// UseTOTPStep accepts a code of time step step on the user's confirmed
// row: last_step becomes step, failures and backoff are cleared. false
// when nothing matched: a replay of that step or an earlier one (by any
// instance), or no confirmed row. One conditional UPDATE, so of two
// requests racing with one code exactly one wins.
func (s *Store) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	r := s.db().WithContext(ctx).Model(&TwoFactor{}).
		Where("user_id = ? AND confirmed_at IS NOT NULL AND last_step < ?", userID, step).
		Updates(map[string]any{"last_step": step, "failures": 0, "blocked_until": nil})
	if r.Error != nil {
		return false, fmt.Errorf("use two-factor code: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// reserveCheckSQL counts a code about to be checked as a wrong one, in
// one statement, unless the user's codes are blocked at now; the count
// that reaches free also blocks (provisionally, until the check's outcome
// writes its own); below it an expired block is left as it is (ELSE
// blocked_until also gives PostgreSQL the parameter's type). SET reads the
// row as it was, on both dialects, and
// PostgreSQL re-reads the WHERE on the row a concurrent UPDATE left, so
// of racing requests on any instances exactly as many pass as the count
// allows. Both dialects read RETURNING (SQLite 3.35+).
const reserveCheckSQL = `UPDATE two_factors SET failures = failures + 1,
	blocked_until = CASE WHEN failures + 1 >= ? THEN ? ELSE blocked_until END
	WHERE user_id = ? AND (blocked_until IS NULL OR blocked_until <= ?)
	RETURNING failures`

// ReserveTwoFactorCheck counts one code of the user as wrong before it is
// checked, as the password throttle counts in advance: a right code then
// clears the count (UseTOTPStep, UseRecoveryCode, ConfirmTwoFactor), a
// wrong one leaves it and earns its backoff (BackOffTwoFactor). Counting
// after the check let parallel requests all read "not blocked" and check
// far more than free codes. ok is false, nothing written, while the codes
// are blocked (or the user has no row); failures is the new count. The
// count that reaches free blocks until hold.
func (s *Store) ReserveTwoFactorCheck(ctx context.Context, userID string, now time.Time, free int, hold time.Time) (failures int, ok bool, err error) {
	var got []int
	err = s.db().WithContext(ctx).Raw(reserveCheckSQL, free, models.DBTime(hold), userID, models.DBTime(now)).Scan(&got).Error
	if err != nil {
		return 0, false, fmt.Errorf("reserve a two-factor check: %w", err)
	}
	if len(got) == 0 {
		return 0, false, nil
	}
	return got[0], true, nil
}

// BackOffTwoFactor blocks the user's codes until the given time after the
// failures-th wrong code in a row, unless a right code cleared the count
// meanwhile (failures below it): a late wrong answer does not block a
// user who has since signed in.
func (s *Store) BackOffTwoFactor(ctx context.Context, userID string, failures int, until time.Time) error {
	err := s.db().WithContext(ctx).Model(&TwoFactor{}).Where("user_id = ? AND failures >= ?", userID, failures).
		UpdateColumn("blocked_until", models.DBTime(until)).Error
	if err != nil {
		return fmt.Errorf("back off two-factor codes: %w", err)
	}
	return nil
}

// ForgetDevices sets a new device key, so every remembered-device cookie
// of the user (which carries the old one) stops counting. false when the
// user has no row.
func (s *Store) ForgetDevices(ctx context.Context, userID, newKey string) (bool, error) {
	r := s.db().WithContext(ctx).Model(&TwoFactor{}).Where("user_id = ?", userID).Update("device_key", newKey)
	if r.Error != nil {
		return false, fmt.Errorf("forget remembered devices: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// subject is an event of type typ about userID.
func subject(typ, userID, actor string) events.Event {
	return events.Event{Type: typ, Data: events.Subject{UserID: userID, Actor: actor}}
}

// DeleteTwoFactor turns two-factor off: the user's row, recovery codes and
// pending second steps go in one transaction, so no sign-in half done with
// the old factor can finish. false, nothing written, when there was no row.
func (s *Store) DeleteTwoFactor(ctx context.Context, userID string) (bool, error) {
	var ok bool
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var gone []TwoFactor
		r := tx.Clauses(clause.Returning{Columns: []clause.Column{{Name: "confirmed_at"}}}).Where("user_id = ?", userID).Delete(&gone)
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		ok = true
		if err := tx.Where("user_id = ?", userID).Delete(&RecoveryCode{}).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", userID).Delete(&SecondStep{}).Error; err != nil {
			return err
		}
		if len(gone) == 0 || gone[0].ConfirmedAt == nil { // an enrolment given up: it was never on
			return nil
		}
		return s.store.Emit(tx, subject(events.TwoFactorOff, userID, events.ActorOf(ctx)))
	})
	if err != nil {
		return false, fmt.Errorf("delete two-factor: %w", err)
	}
	return ok, nil
}
