package twofactorstore

import (
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// TwoFactor is a user's authenticator-app second factor (TOTP, RFC 6238).
// A row without ConfirmedAt is an enrolment begun and not confirmed with a
// code yet: it is not in force, and a new enrolment replaces it.
type TwoFactor struct {
	UserID string      `gorm:"primaryKey;size:36"`
	User   models.User `gorm:"constraint:OnDelete:CASCADE"`
	// Secret is the TOTP secret sealed under the service secret (AEAD,
	// app/twofactor); never the secret itself.
	Secret      string `gorm:"not null"`
	ConfirmedAt *time.Time
	// LastStep is the last time step (Unix time / 30 s) whose code was
	// accepted: a code is accepted only for a later step, so each is
	// accepted at most once, by any instance.
	LastStep int64 `gorm:"not null"`
	// Failures counts wrong codes since the last right one; BlockedUntil
	// is the backoff they earned (nil: none).
	Failures     int `gorm:"not null"`
	BlockedUntil *time.Time
	// DeviceKey is in every remembered-device cookie of this user; a new
	// key forgets them all.
	DeviceKey string `gorm:"not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RecoveryCode is one single-use recovery code of a user, stored hashed
// (CodeHash: email.HashToken under the first secret, as e-mail tokens).
type RecoveryCode struct {
	ID        string      `gorm:"primaryKey;size:36"`
	UserID    string      `gorm:"index:idx_recovery_codes_user_id;not null;size:36"`
	User      models.User `gorm:"constraint:OnDelete:CASCADE"`
	CodeHash  string      `gorm:"not null;size:64"`
	UsedAt    *time.Time  // nil: unused
	CreatedAt time.Time
}

// SecondStep is a sign-in waiting for its second factor: the first factor
// passed and no session exists yet. The browser holds a sealed cookie with
// the token whose SHA-256 is TokenHash; the row makes the step single-use
// and counts its attempts across instances.
type SecondStep struct {
	TokenHash string      `gorm:"primaryKey;size:64"`
	UserID    string      `gorm:"index:idx_second_steps_user_id;not null;size:36"`
	User      models.User `gorm:"constraint:OnDelete:CASCADE"`
	// Provider is the first factor's provider id; Methods its amr values
	// (space-separated, e.g. "pwd").
	Provider string `gorm:"not null"`
	Methods  string `gorm:"not null"`
	// CallbackURL is where the sign-in goes once complete (validated when
	// the first factor started).
	CallbackURL string `gorm:"not null"`
	IsNew       bool   `gorm:"not null"`
	// Enrol: the policy requires two-factor and the user has none: the step
	// is the enrolment, not a code.
	Enrol     bool      `gorm:"not null"`
	Attempts  int       `gorm:"not null"`
	Expires   time.Time `gorm:"index:idx_second_steps_expires;not null"`
	CreatedAt time.Time
}
