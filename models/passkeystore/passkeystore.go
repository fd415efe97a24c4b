// Package passkeystore is the storage of passkeys (WebAuthn credentials)
// and of the challenges already answered: a feature package of models
// (models/<feature>store, on models.Store's connection). The tables are
// models' Authenticator and UsedChallenge, created by models/schema.
package passkeystore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

// Store is the passkeys' storage on a models.Store's database. Build it
// with New.
type Store struct {
	store *models.Store
}

// New returns the passkeys' storage on s's database (no state of its own:
// any number may share s).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }

// UseChallenge records a challenge as answered; models.ErrChallengeUsed when it
// was, by this or any instance.
func (s *Store) UseChallenge(ctx context.Context, hash string, expires time.Time) error {
	err := s.db().WithContext(ctx).Create(&models.UsedChallenge{ChallengeHash: hash, Expires: expires.Unix()}).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return models.ErrChallengeUsed
	}
	if err != nil {
		return fmt.Errorf("record webauthn challenge: %w", err)
	}
	return nil
}

// AddAuthenticator stores a new passkey.
func (s *Store) AddAuthenticator(ctx context.Context, a *models.Authenticator) error {
	if a.ID == "" {
		a.ID = models.NewID()
	}
	err := s.store.Change(ctx, []string{events.PasskeyAdded}, func(tx *gorm.DB) ([]events.Event, error) {
		if err := tx.Omit("User").Create(a).Error; err != nil {
			return nil, err
		}
		return []events.Event{{Type: events.PasskeyAdded, Data: events.Passkey{UserID: a.UserID, PasskeyID: a.ID, Name: a.Name}}}, nil
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return models.ErrCredentialExists
	}
	if err != nil {
		return fmt.Errorf("add authenticator: %w", err)
	}
	return nil
}

// AuthenticatorsOf lists a user's passkeys, oldest first.
func (s *Store) AuthenticatorsOf(ctx context.Context, userID string) ([]models.Authenticator, error) {
	var out []models.Authenticator
	if err := s.db().WithContext(ctx).Where("user_id = ?", userID).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list authenticators: %w", err)
	}
	return out, nil
}

// AuthenticatorByCredentialID finds a passkey by its credential id.
func (s *Store) AuthenticatorByCredentialID(ctx context.Context, credentialID string) (*models.Authenticator, error) {
	var a models.Authenticator
	err := s.db().WithContext(ctx).Where("credential_id = ?", credentialID).Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find authenticator: %w", err)
	}
	return &a, nil
}

// UseAuthenticator records a successful sign-in with a passkey: its new
// signature counter, backup state and last use. The counter only moves
// forward (the WHERE): the caller passes the stored count again to keep it;
// models.ErrNotFound if the passkey was removed (or its counter passed count)
// meanwhile.
func (s *Store) UseAuthenticator(ctx context.Context, id string, count uint32, backupState bool, at time.Time) error {
	r := s.db().WithContext(ctx).Model(&models.Authenticator{}).
		Where("id = ? AND sign_count <= ?", id, count).
		Updates(map[string]any{"sign_count": count, "backup_state": backupState, "last_used_at": at})
	if r.Error != nil {
		return fmt.Errorf("update authenticator: %w", r.Error)
	}
	if r.RowsAffected == 0 {
		return models.ErrNotFound
	}
	return nil
}

// RenameAuthenticator sets the name of one of userID's passkeys.
func (s *Store) RenameAuthenticator(ctx context.Context, userID, id, name string) error {
	r := s.db().WithContext(ctx).Model(&models.Authenticator{}).Where("id = ? AND user_id = ?", id, userID).Update("name", name)
	if r.Error != nil {
		return fmt.Errorf("rename authenticator: %w", r.Error)
	}
	if r.RowsAffected == 0 {
		return models.ErrNotFound
	}
	return nil
}

// RemoveAuthenticator deletes one of userID's passkeys, unless keep says
// the user would be left without a way to sign in: keep gets the ways
// left, read in the same transaction under the user's row lock
// (RemoveSignInWay), so an identity unlinked at the same moment is either
// gone already or waits for this decision.
func (s *Store) RemoveAuthenticator(ctx context.Context, userID, id string, keep func(left models.SignInWays) error) error {
	return s.store.RemoveSignInWay(ctx, userID, func(tx *gorm.DB, _ func() (models.SignInWays, error)) ([]events.Event, error) {
		r := tx.Where("id = ? AND user_id = ?", id, userID).Delete(&models.Authenticator{})
		if r.Error != nil {
			return nil, fmt.Errorf("remove authenticator: %w", r.Error)
		}
		if r.RowsAffected == 0 {
			return nil, models.ErrNotFound
		}
		return []events.Event{{Type: events.PasskeyRemoved, Data: events.Passkey{UserID: userID, PasskeyID: id, Actor: events.ActorOf(ctx)}}}, nil
	}, keep)
}
