package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Password is a user's password: an Argon2id PHC string (app/password),
// never the password. A user without a row has no password: they sign in
// with OAuth or e-mail only.
type Password struct {
	UserID string `gorm:"primaryKey;size:36"`
	User   User   `gorm:"constraint:OnDelete:CASCADE"`
	Hash   string `gorm:"not null"`
	// UpdatedAt is when the password was last set (or re-hashed).
	UpdatedAt time.Time `gorm:"not null"`
}

// TableName is passwords.
func (Password) TableName() string { return "passwords" }

// PasswordHash returns the stored hash of userID's password, or
// ErrNotFound when the user has none.
func (s *Store) PasswordHash(ctx context.Context, userID string) (string, error) {
	var p Password
	err := s.db.WithContext(ctx).Select("hash").Where("user_id = ?", userID).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return p.Hash, nil
}

// UserAndPasswordByEmail finds the user with the (lower-cased) e-mail and
// their password hash in one query. The user may exist without a password
// (hash ""); no user is ErrNotFound.
func (s *Store) UserAndPasswordByEmail(ctx context.Context, email string) (*User, string, error) {
	var row struct {
		User
		PasswordHash *string
	}
	err := s.db.WithContext(ctx).Model(&User{}).
		Select("users.*, passwords.hash AS password_hash").
		Joins("LEFT JOIN passwords ON passwords.user_id = users.id").
		Where("users.email = ?", strings.ToLower(email)).
		Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("find user and password: %w", err)
	}
	u := row.User
	if row.PasswordHash == nil {
		return &u, "", nil
	}
	return &u, *row.PasswordHash, nil
}

// SetPasswordHash stores hash as userID's password, replacing any other.
// The user must exist (else ErrNotFound).
func (s *Store) SetPasswordHash(ctx context.Context, userID, hash string) error {
	return setPasswordHash(s.db.WithContext(ctx), userID, hash)
}

func setPasswordHash(tx *gorm.DB, userID, hash string) error {
	var n int64
	if err := tx.Model(&User{}).Where("id = ?", userID).Count(&n).Error; err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("set password: %w", ErrNotFound)
	}
	p := Password{UserID: userID, Hash: hash, UpdatedAt: dbNow()}
	err := tx.Omit("User").Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"hash", "updated_at"}),
	}).Create(&p).Error
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	return nil
}

// ReplacePasswordHash stores hash as userID's password only while the
// stored one is still old: a transparent re-hash at sign-in must not undo
// a password change that happened meanwhile. It reports whether it wrote.
func (s *Store) ReplacePasswordHash(ctx context.Context, userID, old, hash string) (bool, error) {
	r := s.db.WithContext(ctx).Model(&Password{}).
		Where("user_id = ? AND hash = ?", userID, old).
		Updates(map[string]any{"hash": hash, "updated_at": dbNow()})
	if r.Error != nil {
		return false, fmt.Errorf("replace password: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// DeletePassword removes userID's password (they keep their other ways to
// sign in). Deleting a password that is not there is not an error.
func (s *Store) DeletePassword(ctx context.Context, userID string) error {
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Delete(&Password{}).Error; err != nil {
		return fmt.Errorf("delete password: %w", err)
	}
	return nil
}

// CreateUserWithPassword creates u (an id is generated when empty) and its
// password in one transaction, with its user.created: a failure leaves
// neither row. A taken e-mail is ErrConflict.
func (s *Store) CreateUserWithPassword(ctx context.Context, u *User, hash string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if u.ID == "" {
			u.ID = NewID()
		}
		if err := tx.Create(withDBTime(u)).Error; err != nil {
			return fmt.Errorf("create user: %w", conflict(err))
		}
		if err := setPasswordHash(tx, u.ID, hash); err != nil {
			return err
		}
		return s.Emit(tx, userCreated(u, "credentials"))
	})
}

// PasswordChangedAt is when userID's password was last set or re-hashed,
// or ErrNotFound when the user has none.
func (s *Store) PasswordChangedAt(ctx context.Context, userID string) (time.Time, error) {
	var p Password
	err := s.db.WithContext(ctx).Select("updated_at").Where("user_id = ?", userID).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return time.Time{}, ErrNotFound
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read password: %w", err)
	}
	return p.UpdatedAt, nil
}
