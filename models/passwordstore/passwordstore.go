// Package passwordstore is the storage of the password flows: pending
// sign-ups, reset links and password changes (app/accounts). A feature
// package of models (models/<feature>store, on models.Store's connection);
// the password itself (models.Password) and its sign-in read stay in
// models, which the sign-in, the admin commands and the import share.
package passwordstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

// The password flows' links are verification tokens under identifiers of
// their own: the sign-up's names the address (no user exists yet), the
// reset's the user (models.ResetPrefix, which the e-mail change and the
// admin commands also spend). An e-mail sign-in never finds them: their
// hashes are made under a different prefix.
const signUpPrefix = "password-signup:"

// Store is the password flows' storage on a models.Store's database. Build
// it with New.
type Store struct {
	store *models.Store
}

// New returns the password flows' storage on s's database (no state of its
// own: any number may share s).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }

// PasswordSignUp is the password chosen at a pending sign-up: its Argon2id
// hash, kept with the sign-up link's token until the address is confirmed.
type PasswordSignUp struct {
	TokenHash    string `gorm:"primaryKey;size:64"`
	PasswordHash string `gorm:"not null"`
}

// TableName is password_signups.
func (PasswordSignUp) TableName() string { return "password_signups" }

// PendingSignUp is a live sign-up link: the address it confirms and the
// hash of the password chosen with it.
type PendingSignUp struct {
	TokenHash    string
	Email        string
	PasswordHash string
	Expires      time.Time
}

// CreatePasswordSignUp stores a pending sign-up: the link's token row and
// the password's hash, together or not at all.
func (s *Store) CreatePasswordSignUp(ctx context.Context, email, tokenHash, passwordHash string, expires time.Time) error {
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row := models.VerificationToken{Identifier: signUpPrefix + email, TokenHash: tokenHash, Expires: models.DBTime(expires)}
		if err := tx.Create(&row).Error; err != nil {
			return models.Conflict(err)
		}
		return tx.Create(&PasswordSignUp{TokenHash: tokenHash, PasswordHash: passwordHash}).Error
	})
	if err != nil {
		return fmt.Errorf("create pending sign-up: %w", err)
	}
	return nil
}

// DeletePasswordSignUp removes a pending sign-up (its mail could not be
// sent); a missing one is not an error.
func (s *Store) DeletePasswordSignUp(ctx context.Context, tokenHash string) error {
	err := s.db().WithContext(ctx).Where("token_hash = ? AND identifier LIKE ?", tokenHash, signUpPrefix+"%").
		Delete(&models.VerificationToken{}).Error
	if err != nil {
		return fmt.Errorf("delete pending sign-up: %w", err)
	}
	return nil
}

// PasswordSignUpByHash finds a live pending sign-up without spending it;
// unknown, spent and expired are models.ErrNotFound.
func (s *Store) PasswordSignUpByHash(ctx context.Context, tokenHash string, now time.Time) (*PendingSignUp, error) {
	var rows []struct {
		Identifier   string
		PasswordHash string
		Expires      time.Time
	}
	err := s.db().WithContext(ctx).Raw(`SELECT v.identifier, p.password_hash, v.expires
		FROM verification_tokens v JOIN password_signups p ON p.token_hash = v.token_hash
		WHERE v.token_hash = ? AND v.identifier LIKE ? AND v.expires > ?`,
		tokenHash, signUpPrefix+"%", models.DBTime(now)).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find pending sign-up: %w", err)
	}
	if len(rows) == 0 {
		return nil, models.ErrNotFound
	}
	r := rows[0]
	return &PendingSignUp{TokenHash: tokenHash, Email: r.Identifier[len(signUpPrefix):], PasswordHash: r.PasswordHash, Expires: r.Expires}, nil
}

// CompletePasswordSignUp turns a live pending sign-up into a user, in one
// transaction: the link is spent, the user created with the address
// verified (the link proved it) and the chosen password, and the
// address's other pending sign-ups go. Of two concurrent completions one
// wins (the other models.ErrNotFound). An address held by an unverified user is
// the owner's now: a claimant with sign-in methods of its own loses it and
// the owner gets a new user; one without any is claimed, verified, with
// the password (see releaseUnproved). An address with a verified user is
// models.ErrConflict and nothing changes: that user is not touched, the link
// stays. A claimed user's sessions end as after a password reset
// (endPasswordSessions): whoever signed into it before the owner proved
// the address is no longer signed in once it has the owner's password.
func (s *Store) CompletePasswordSignUp(ctx context.Context, tokenHash string, now time.Time) (*SignedUp, error) {
	now = models.DBTime(now)
	var u *models.User
	var claimed bool
	var ended int64
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var pending PasswordSignUp
		if err := tx.Where("token_hash = ?", tokenHash).Take(&pending).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return models.ErrNotFound
			}
			return err
		}
		var spent []string
		err := tx.Raw(`DELETE FROM verification_tokens WHERE token_hash = ? AND identifier LIKE ? AND expires > ?
			RETURNING identifier`, tokenHash, signUpPrefix+"%", now).Scan(&spent).Error
		if err != nil {
			return err
		}
		if len(spent) == 0 {
			return models.ErrNotFound
		}
		addr := spent[0][len(signUpPrefix):]
		if _, err := models.ReleaseUnproved(tx, addr); err != nil {
			return err
		}
		held, err := setUnverifiedVerified(tx, addr, now)
		var evs []events.Event
		switch {
		case err != nil:
			return err
		case held != nil:
			u, claimed = held, true
			evs = append(evs, events.Event{Type: events.UserUpdated, Data: events.UserChange{User: models.EventUser(u), Changes: []string{"email_verified"}}})
		default:
			u = &models.User{ID: models.NewID(), Email: &addr, EmailVerified: &now}
			if err := tx.Create(u).Error; err != nil {
				return models.Conflict(err)
			}
			evs = append(evs, models.UserCreated(u, "credentials"))
		}
		if err := models.SetPasswordHashIn(tx, u.ID, pending.PasswordHash); err != nil {
			return err
		}
		if err := tx.Where("identifier = ?", spent[0]).Delete(&models.VerificationToken{}).Error; err != nil {
			return err
		}
		if claimed {
			if ended, err = endPasswordSessions(tx, s.store.Dialect(), u.ID, now); err != nil {
				return err
			}
			evs = append(evs, models.SessionsEnded(ctx, u.ID, events.ReasonPasswordReset))
		}
		return s.store.Emit(tx, evs...)
	})
	if err != nil {
		return nil, fmt.Errorf("complete sign-up: %w", err)
	}
	return &SignedUp{User: u, Claimed: claimed, Ended: ended}, nil
}

// SignedUp is a completed sign-up: its user, and whether that was an
// unverified user already holding the address (Claimed), whose sessions
// then ended (Ended database sessions deleted, its JWTs revoked).
type SignedUp struct {
	User    *models.User
	Claimed bool
	Ended   int64
}

// setUnverifiedVerified verifies the unverified user holding email (left
// there by releaseUnproved: it has no way to sign in) and returns it; nil
// when there is none.
func setUnverifiedVerified(tx *gorm.DB, email string, now time.Time) (*models.User, error) {
	var users []models.User
	err := tx.Raw(`UPDATE users SET email_verified = ? WHERE email = ? AND email_verified IS NULL RETURNING *`, now, email).Scan(&users).Error
	if err != nil || len(users) == 0 {
		return nil, err
	}
	return &users[0], nil
}

// CreatePasswordReset stores a reset link's token for a user.
func (s *Store) CreatePasswordReset(ctx context.Context, userID, tokenHash string, expires time.Time) error {
	return s.store.CreateVerificationToken(ctx, models.ResetPrefix+userID, tokenHash, expires)
}

// DeletePasswordReset removes a reset token (its mail could not be sent).
func (s *Store) DeletePasswordReset(ctx context.Context, userID, tokenHash string) error {
	return s.store.DeleteVerificationToken(ctx, models.ResetPrefix+userID, tokenHash)
}

// PasswordResetByHash returns the user id of a live reset token without
// spending it; unknown, spent and expired are models.ErrNotFound.
func (s *Store) PasswordResetByHash(ctx context.Context, tokenHash string, now time.Time) (string, error) {
	var ids []string
	err := s.db().WithContext(ctx).Model(&models.VerificationToken{}).
		Where("token_hash = ? AND identifier LIKE ? AND expires > ?", tokenHash, models.ResetPrefix+"%", models.DBTime(now)).
		Pluck("identifier", &ids).Error
	if err != nil {
		return "", fmt.Errorf("find password reset: %w", err)
	}
	if len(ids) == 0 {
		return "", models.ErrNotFound
	}
	return ids[0][len(models.ResetPrefix):], nil
}

// CompletePasswordReset sets a user's password with a live reset token, in
// one transaction: the token and the user's other reset tokens are spent,
// the password set, the address marked verified if it was not (the link
// proved it), and every session of the user signed in up to now revoked
// (RevokeSessions). A spent or expired token is models.ErrNotFound and changes
// nothing. It returns the user who holds the password now (userID, or the
// new user below) and the number of database sessions deleted.
//
// A user whose address is unverified and who has a way to sign in of its
// own is a claimant (releaseUnproved): the link proved the address for its
// owner, so the claimant loses it and the password goes to a new user,
// verified, who inherits nothing of the claimant's.
func (s *Store) CompletePasswordReset(ctx context.Context, userID, tokenHash, passwordHash string, now time.Time) (holderID string, ended int64, err error) {
	holderID = userID
	err = s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Where("identifier = ? AND token_hash = ? AND expires > ?", models.ResetPrefix+userID, tokenHash, models.DBTime(now)).
			Delete(&models.VerificationToken{})
		if r.Error != nil {
			return r.Error
		}
		if r.RowsAffected == 0 {
			return models.ErrNotFound
		}
		var holder models.User
		if err := tx.Where("id = ?", userID).Take(&holder).Error; err != nil {
			return err
		}
		if holder.Email == nil { // lost its address since the link was mailed to it
			return models.ErrNotFound
		}
		if holder.EmailVerified == nil {
			released, err := models.ReleaseUnproved(tx, *holder.Email)
			if err != nil {
				return err
			}
			if released {
				at := models.DBTime(now)
				owner := &models.User{ID: models.NewID(), Email: holder.Email, EmailVerified: &at}
				if err := tx.Create(owner).Error; err != nil {
					return models.Conflict(err)
				}
				if err := tx.Where("identifier = ?", models.ResetPrefix+userID).Delete(&models.VerificationToken{}).Error; err != nil {
					return err
				}
				if err := models.SetPasswordHashIn(tx, owner.ID, passwordHash); err != nil {
					return err
				}
				holderID = owner.ID
				return s.store.Emit(tx, models.UserCreated(owner, "credentials"))
			}
		}
		if err := models.SetPasswordHashIn(tx, userID, passwordHash); err != nil {
			return err
		}
		r = tx.Model(&models.User{}).Where("id = ? AND email_verified IS NULL", userID).Update("email_verified", models.DBTime(now))
		if r.Error != nil {
			return r.Error
		}
		evs := []events.Event{{Type: events.PasswordReset, Data: events.Subject{UserID: userID}}}
		if r.RowsAffected == 1 {
			at := models.DBTime(now)
			holder.EmailVerified = &at
			evs = append(evs, events.Event{Type: events.UserUpdated, Data: events.UserChange{User: models.EventUser(&holder), Changes: []string{"email_verified"}}})
		}
		var err error
		if ended, err = endPasswordSessions(tx, s.store.Dialect(), userID, now); err != nil {
			return err
		}
		return s.store.Emit(tx, append(evs, models.SessionsEnded(ctx, userID, events.ReasonPasswordReset))...)
	})
	if err != nil {
		return "", 0, fmt.Errorf("reset password: %w", err)
	}
	return holderID, ended, nil
}

// ChangePassword replaces a user's password while the stored hash is still
// old (else models.ErrConflict: it changed meanwhile), spends the user's reset
// tokens and revokes every session of the user signed in up to now, in
// one transaction. It returns the number of database sessions deleted.
func (s *Store) ChangePassword(ctx context.Context, userID, old, passwordHash string, now time.Time) (int64, error) {
	var ended int64
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Model(&models.Password{}).Where("user_id = ? AND hash = ?", userID, old).
			Updates(map[string]any{"hash": passwordHash, "updated_at": models.DBTime(now)})
		if r.Error != nil {
			return r.Error
		}
		if r.RowsAffected == 0 {
			return models.ErrConflict
		}
		var err error
		if ended, err = endPasswordSessions(tx, s.store.Dialect(), userID, now); err != nil {
			return err
		}
		return s.store.Emit(tx, events.Event{Type: events.PasswordChange, Data: events.Subject{UserID: userID, Actor: events.ActorOf(ctx)}},
			models.SessionsEnded(ctx, userID, events.ReasonPasswordChanged))
	})
	if err != nil {
		return 0, fmt.Errorf("change password: %w", err)
	}
	return ended, nil
}

// endPasswordSessions is what follows a new password: the user's pending
// reset links go (one mailed for the old password must not outlive it) and
// every session signed in up to now ends.
func endPasswordSessions(tx *gorm.DB, dialect, userID string, now time.Time) (int64, error) {
	if err := tx.Where("identifier = ?", models.ResetPrefix+userID).Delete(&models.VerificationToken{}).Error; err != nil {
		return 0, err
	}
	return models.RevokeIn(tx, dialect, userID, now)
}
