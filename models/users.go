package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/models/events"
	"gorm.io/gorm"
)

// ErrConflict is returned when a unique constraint (e-mail, provider account) is hit.
var ErrConflict = errors.New("already exists")

// UserByID finds a user.
func (s *Store) UserByID(ctx context.Context, id string) (*User, error) {
	return s.findUser(s.db.WithContext(ctx).Where("id = ?", id))
}

// UserByEmail finds a user by (lower-cased) e-mail.
func (s *Store) UserByEmail(ctx context.Context, email string) (*User, error) {
	return s.findUser(s.db.WithContext(ctx).Where("email = ?", strings.ToLower(email)))
}

// UserByAccount finds the user linked to a provider account.
func (s *Store) UserByAccount(ctx context.Context, provider, providerAccountID string) (*User, error) {
	return s.findUser(s.db.WithContext(ctx).
		Joins("JOIN accounts ON accounts.user_id = users.id").
		Where("accounts.provider = ? AND accounts.provider_account_id = ?", provider, providerAccountID))
}

func (s *Store) findUser(q *gorm.DB) (*User, error) {
	var u User
	err := q.Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	return &u, nil
}

// CreateUserWithAccount creates a user and links acc to it in one
// transaction, with their user.created and account.linked events: a
// failure leaves neither row.
func (s *Store) CreateUserWithAccount(ctx context.Context, u *User, acc *Account) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if u.ID == "" {
			u.ID = NewID()
		}
		if err := tx.Create(withDBTime(u)).Error; err != nil {
			return fmt.Errorf("create user: %w", conflict(err))
		}
		acc.UserID = u.ID
		if acc.ID == "" {
			acc.ID = NewID()
		}
		if err := tx.Omit("User").Create(acc).Error; err != nil {
			return fmt.Errorf("link account: %w", conflict(err))
		}
		return s.Emit(tx, userCreated(u, acc.Provider), accountLinked(acc))
	})
}

// LinkAccount links acc to an existing user.
func (s *Store) LinkAccount(ctx context.Context, acc *Account) error {
	if acc.ID == "" {
		acc.ID = NewID()
	}
	return s.Change(ctx, []string{events.AccountLinked}, func(tx *gorm.DB) ([]events.Event, error) {
		if err := tx.Omit("User").Create(acc).Error; err != nil {
			return nil, fmt.Errorf("link account: %w", conflict(err))
		}
		return []events.Event{accountLinked(acc)}, nil
	})
}

// conflict maps unique-constraint failures (translated by GORM) to ErrConflict.
func conflict(err error) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// CreateUser stores a new user (an id is generated when empty); an e-mail
// that is taken is ErrConflict. Its user.created names no provider: the
// admin command makes it, before any sign-in.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	if u.ID == "" {
		u.ID = NewID()
	}
	return s.Change(ctx, []string{events.UserCreated}, func(tx *gorm.DB) ([]events.Event, error) {
		if err := tx.Create(withDBTime(u)).Error; err != nil {
			return nil, fmt.Errorf("create user: %w", conflict(err))
		}
		return []events.Event{userCreated(u, "")}, nil
	})
}

// ListUsers returns up to limit users, oldest first.
func (s *Store) ListUsers(ctx context.Context, limit int) ([]User, error) {
	var out []User
	if err := s.db.WithContext(ctx).Order("created_at, id").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// AccountsOf returns the provider accounts linked to a user.
func (s *Store) AccountsOf(ctx context.Context, userID string) ([]Account, error) {
	var out []Account
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return out, nil
}
