// Package tokenstore is the storage of the provider tokens kept for
// GET {base}/token/:provider (issue #35): the token columns of the
// accounts table, the refresh lease and the refresh-failure mark, and every
// query on them, both dialects. It is a feature package of models (the
// pattern: models/<feature>store, on models.Store's connection). It never
// sees a token in the clear: the rules (app/providertokens) seal what they
// write and open what they read.
package tokenstore

import (
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Store is the provider-token storage on a models.Store's database; it
// implements app/providertokens' Store. Build it with New.
type Store struct {
	store *models.Store
}

// New returns the token storage on s's database (no state of its own).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }

// Account is an accounts row as the token rules see it: the identity,
// its sealed tokens and their metadata, the mark and the lease.
type Account struct {
	ID                string `gorm:"primaryKey;size:36"`
	UserID            string `gorm:"not null;size:36"`
	Provider          string `gorm:"not null"`
	ProviderAccountID string `gorm:"not null"`
	Sealed            `gorm:"embedded"`
	// TokenError is "RefreshAccessTokenError" once the provider refused
	// the refresh token, until a new sign-in with the provider.
	TokenError *string `gorm:"column:token_error"`
	// RefreshLeaseOwner holds the account's refresh until
	// RefreshLeaseUntil (epoch milliseconds): one request of all instances.
	RefreshLeaseOwner *string `gorm:"column:refresh_lease_owner"`
	RefreshLeaseUntil *int64  `gorm:"column:refresh_lease_until"`
}

// TableName: the token columns live on accounts.
func (Account) TableName() string { return "accounts" }

// Sealed are the token columns: the three tokens sealed by the rules (nil:
// none), the expiry in epoch seconds (as Auth.js), the token type and the
// granted scope (not secret, kept as given).
type Sealed struct {
	AccessToken  *string `gorm:"column:access_token;type:text"`
	RefreshToken *string `gorm:"column:refresh_token;type:text"`
	IDToken      *string `gorm:"column:id_token;type:text"`
	ExpiresAt    *int64  `gorm:"column:expires_at"`
	TokenType    *string `gorm:"column:token_type"`
	Scope        *string `gorm:"column:scope"`
}

// columns are the values of Sealed for an UPDATE (nil writes NULL).
func (t Sealed) columns() map[string]any {
	return map[string]any{
		"access_token": t.AccessToken, "refresh_token": t.RefreshToken, "id_token": t.IDToken,
		"expires_at": t.ExpiresAt, "token_type": t.TokenType, "scope": t.Scope,
	}
}
