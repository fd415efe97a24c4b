package models

import (
	"errors"
	"time"
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
