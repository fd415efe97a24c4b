package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/models/events"
	"gorm.io/gorm"
)

// Authenticator is one passkey (WebAuthn credential) of a user: what the
// relying party must keep to verify its signatures. CredentialID is the
// credential's id, base64url without padding, unique across all users.
type Authenticator struct {
	ID             string    `gorm:"primaryKey;size:36"`
	UserID         string    `gorm:"index:idx_authenticators_user_id;not null;size:36"`
	User           User      `gorm:"constraint:OnDelete:CASCADE"`
	CredentialID   string    `gorm:"uniqueIndex:idx_authenticators_credential_id;not null"`
	PublicKey      []byte    `gorm:"not null"` // COSE key
	SignCount      uint32    `gorm:"not null"`
	Transports     string    `gorm:"not null"` // comma-separated: internal,hybrid,usb,...
	BackupEligible bool      `gorm:"not null"`
	BackupState    bool      `gorm:"not null"`
	AAGUID         []byte    `gorm:"column:aaguid"`
	Name           string    `gorm:"not null"` // given by the user
	CreatedAt      time.Time // set by the caller
	LastUsedAt     *time.Time
}

// UsedChallenge is a WebAuthn challenge already answered, kept until
// Expires (the caller's: some time past the challenge's own expiry): a
// second answer to it is a replay.
type UsedChallenge struct {
	ChallengeHash string `gorm:"primaryKey"`
	Expires       int64  `gorm:"not null"` // Unix seconds
}

// TableName is webauthn_challenges.
func (UsedChallenge) TableName() string { return "webauthn_challenges" }

// ErrChallengeUsed is returned by UseChallenge for a challenge answered before.
var ErrChallengeUsed = errors.New("challenge already used")

// ErrCredentialExists is returned by AddAuthenticator for a credential id
// already registered (to anyone).
var ErrCredentialExists = errors.New("credential already registered")

// UseChallenge records a challenge as answered; ErrChallengeUsed when it
// was, by this or any instance.
func (s *Store) UseChallenge(ctx context.Context, hash string, expires time.Time) error {
	err := s.db.WithContext(ctx).Create(&UsedChallenge{ChallengeHash: hash, Expires: expires.Unix()}).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return ErrChallengeUsed
	}
	if err != nil {
		return fmt.Errorf("record webauthn challenge: %w", err)
	}
	return nil
}

// AddAuthenticator stores a new passkey.
func (s *Store) AddAuthenticator(ctx context.Context, a *Authenticator) error {
	if a.ID == "" {
		a.ID = NewID()
	}
	err := s.Change(ctx, []string{events.PasskeyAdded}, func(tx *gorm.DB) ([]events.Event, error) {
		if err := tx.Omit("User").Create(a).Error; err != nil {
			return nil, err
		}
		return []events.Event{{Type: events.PasskeyAdded, Data: events.Passkey{UserID: a.UserID, PasskeyID: a.ID, Name: a.Name}}}, nil
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return ErrCredentialExists
	}
	if err != nil {
		return fmt.Errorf("add authenticator: %w", err)
	}
	return nil
}

// AuthenticatorsOf lists a user's passkeys, oldest first.
func (s *Store) AuthenticatorsOf(ctx context.Context, userID string) ([]Authenticator, error) {
	var out []Authenticator
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list authenticators: %w", err)
	}
	return out, nil
}

// AuthenticatorByCredentialID finds a passkey by its credential id.
func (s *Store) AuthenticatorByCredentialID(ctx context.Context, credentialID string) (*Authenticator, error) {
	var a Authenticator
	err := s.db.WithContext(ctx).Where("credential_id = ?", credentialID).Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find authenticator: %w", err)
	}
	return &a, nil
}

// UseAuthenticator records a successful sign-in with a passkey: its new
// signature counter, backup state and last use. The counter only moves
// forward (the WHERE): the caller passes the stored count again to keep it;
// ErrNotFound if the passkey was removed (or its counter passed count)
// meanwhile.
func (s *Store) UseAuthenticator(ctx context.Context, id string, count uint32, backupState bool, at time.Time) error {
	r := s.db.WithContext(ctx).Model(&Authenticator{}).
		Where("id = ? AND sign_count <= ?", id, count).
		Updates(map[string]any{"sign_count": count, "backup_state": backupState, "last_used_at": at})
	if r.Error != nil {
		return fmt.Errorf("update authenticator: %w", r.Error)
	}
	if r.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// RenameAuthenticator sets the name of one of userID's passkeys.
func (s *Store) RenameAuthenticator(ctx context.Context, userID, id, name string) error {
	r := s.db.WithContext(ctx).Model(&Authenticator{}).Where("id = ? AND user_id = ?", id, userID).Update("name", name)
	if r.Error != nil {
		return fmt.Errorf("rename authenticator: %w", r.Error)
	}
	if r.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// RemoveAuthenticator deletes one of userID's passkeys, unless keep says
// the user would be left without a way to sign in: keep gets the ways
// left, read in the same transaction under the user's row lock
// (RemoveSignInWay), so an identity unlinked at the same moment is either
// gone already or waits for this decision.
func (s *Store) RemoveAuthenticator(ctx context.Context, userID, id string, keep func(left SignInWays) error) error {
	return s.RemoveSignInWay(ctx, userID, func(tx *gorm.DB, _ func() (SignInWays, error)) ([]events.Event, error) {
		r := tx.Where("id = ? AND user_id = ?", id, userID).Delete(&Authenticator{})
		if r.Error != nil {
			return nil, fmt.Errorf("remove authenticator: %w", r.Error)
		}
		if r.RowsAffected == 0 {
			return nil, ErrNotFound
		}
		return []events.Event{{Type: events.PasskeyRemoved, Data: events.Passkey{UserID: userID, PasskeyID: id, Actor: events.ActorOf(ctx)}}}, nil
	}, keep)
}
