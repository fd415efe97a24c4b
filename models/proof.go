package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// The owner's proof wins (issue 26 M2). A user whose address came from an
// OAuth provider that did not verify it may be anyone who typed that
// address there. When the address's inbox proves it (an e-mail link is
// redeemed, a password sign-up or reset is completed), that user, the
// claimant, must neither keep the address nor hand its account to the
// owner:
//
//   - a claimant with a way to sign in of its own (a linked OAuth account,
//     a passkey or a password) loses the address, in the proof's
//     transaction: its email is cleared, and it keeps everything else
//     (accounts, passkeys, sessions). The owner gets a new user, verified,
//     and inherits none of it: taking over the claimant's row would let
//     whoever holds those methods into the owner's account;
//   - an unverified user with no way to sign in (made by an admin, or
//     whose accounts were removed) is the owner's to claim: the proof
//     verifies it, as a link always did.
//
// A verified user is never touched: its address was proved before.

// HasSignInMethod reports whether the user can sign in without its e-mail
// address: a linked OAuth account, a passkey or a password.
func (s *Store) HasSignInMethod(ctx context.Context, userID string) (bool, error) {
	return hasSignInMethod(s.db.WithContext(ctx), userID)
}

func hasSignInMethod(tx *gorm.DB, userID string) (bool, error) {
	for _, m := range []any{&Account{}, &Authenticator{}, &Password{}} {
		var n int64
		if err := tx.Model(m).Where("user_id = ?", userID).Limit(1).Count(&n).Error; err != nil {
			return false, fmt.Errorf("count sign-in methods: %w", err)
		}
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}

// releaseUnproved clears the address of its unverified holder when that
// holder has a way to sign in of its own (the claimant, above), inside the
// proof's transaction tx; it reports whether it did.
func releaseUnproved(tx *gorm.DB, email string) (bool, error) {
	var holder User
	err := tx.Where("email = ? AND email_verified IS NULL", email).Take(&holder).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find the address's holder: %w", err)
	}
	has, err := hasSignInMethod(tx, holder.ID)
	if err != nil || !has {
		return false, err
	}
	r := tx.Model(&User{}).Where("id = ? AND email_verified IS NULL", holder.ID).Update("email", nil)
	if r.Error != nil {
		return false, fmt.Errorf("release an unproved address: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}
