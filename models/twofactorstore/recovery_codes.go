package twofactorstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

// UnusedRecoveryCodes lists the user's recovery codes not used yet, oldest
// first.
func (s *Store) UnusedRecoveryCodes(ctx context.Context, userID string) ([]RecoveryCode, error) {
	var out []RecoveryCode
	err := s.db().WithContext(ctx).Where("user_id = ? AND used_at IS NULL", userID).Order("created_at, id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list recovery codes: %w", err)
	}
	return out, nil
}

// UseRecoveryCode marks one of the user's codes used and clears the user's
// failures and backoff (a right answer, as a right TOTP code), in one
// transaction. false, nothing written, when the code was used already or
// is not the user's: the conditional UPDATE lets exactly one of several
// requests racing with one code win.
func (s *Store) UseRecoveryCode(ctx context.Context, userID, id string, now time.Time) (bool, error) {
	var ok bool
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Model(&RecoveryCode{}).Where("id = ? AND user_id = ? AND used_at IS NULL", id, userID).
			Update("used_at", models.DBTime(now))
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		ok = true
		err := tx.Model(&TwoFactor{}).Where("user_id = ?", userID).
			Updates(map[string]any{"failures": 0, "blocked_until": nil}).Error
		if err != nil {
			return err
		}
		return s.store.Emit(tx, subject(events.RecoveryUsed, userID, ""))
	})
	if err != nil {
		return false, fmt.Errorf("use recovery code: %w", err)
	}
	return ok, nil
}

// ReplaceRecoveryCodes replaces all of the user's codes, used or not, with
// rows of codeHashes, in one transaction. false, nothing written, when the
// user has no confirmed two-factor row: codes without a factor in force
// would be a way in that nothing shows.
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, userID string, codeHashes []string, now time.Time) (bool, error) {
	var ok bool
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		at := models.DBTime(now)
		// Touching the row both tells that it is confirmed and holds it
		// (a row lock; SQLite's write lock) until the commit, so a
		// DeleteTwoFactor at the same time cannot leave codes behind it.
		r := tx.Model(&TwoFactor{}).Where("user_id = ? AND confirmed_at IS NOT NULL", userID).Update("updated_at", at)
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		ok = true
		if err := replaceCodes(tx, userID, codeHashes, at); err != nil {
			return err
		}
		return s.store.Emit(tx, subject(events.RecoveryCodes, userID, ""))
	})
	if err != nil {
		return false, fmt.Errorf("replace recovery codes: %w", err)
	}
	return ok, nil
}

// replaceCodes deletes the user's codes and inserts codeHashes, inside the
// caller's transaction. Ids come from NewID, as every other table's.
func replaceCodes(tx *gorm.DB, userID string, codeHashes []string, at time.Time) error {
	if err := tx.Where("user_id = ?", userID).Delete(&RecoveryCode{}).Error; err != nil {
		return fmt.Errorf("delete recovery codes: %w", err)
	}
	if len(codeHashes) == 0 {
		return nil
	}
	rows := make([]RecoveryCode, len(codeHashes))
	for i, h := range codeHashes {
		rows[i] = RecoveryCode{ID: models.NewID(), UserID: userID, CodeHash: h, CreatedAt: at}
	}
	if err := tx.Omit("User").Create(&rows).Error; err != nil {
		return fmt.Errorf("insert recovery codes: %w", err)
	}
	return nil
}
