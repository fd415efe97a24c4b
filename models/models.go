// Package models is latchkey's storage: the Auth.js data model (User,
// Account, Session, VerificationToken) and the e-mail rate limits' buckets
// (RateLimit), in GORM over SQLite or PostgreSQL, and the store methods the
// HTTP layer uses. A feature's own tables (two-factor: models/twofactorstore)
// are in a sub-package built on Store; their schema steps are in
// models/schema with every other.
package models

import "time"

// User is a person who signed in at least once.
type User struct {
	ID            string     `gorm:"primaryKey;size:36" json:"id"`
	Name          *string    `json:"name"`
	Email         *string    `gorm:"uniqueIndex" json:"email"`
	EmailVerified *time.Time `json:"emailVerified"`
	Image         *string    `json:"image"`
	CreatedAt     time.Time  `json:"-"`
	UpdatedAt     time.Time  `json:"-"`
}

// Account links a user to one identity at one OAuth provider, with its tokens.
type Account struct {
	ID                string  `gorm:"primaryKey;size:36"`
	UserID            string  `gorm:"index;not null;size:36"`
	User              User    `gorm:"constraint:OnDelete:CASCADE"`
	Type              string  `gorm:"not null"`
	Provider          string  `gorm:"not null;uniqueIndex:idx_accounts_provider_account"`
	ProviderAccountID string  `gorm:"not null;uniqueIndex:idx_accounts_provider_account"`
	RefreshToken      *string `gorm:"type:text"`
	AccessToken       *string `gorm:"type:text"`
	ExpiresAt         *int64  // epoch seconds, as Auth.js
	TokenType         *string
	Scope             *string
	IDToken           *string `gorm:"type:text"`
	SessionState      *string
	// Label is the provider-side e-mail or login the account page shows
	// for this identity; nil when the provider gave none.
	Label     *string `gorm:"column:label"`
	CreatedAt time.Time
}

// Session is a database session. Only the SHA-256 of the cookie's token is
// stored, so a leaked database cannot be replayed as cookies.
type Session struct {
	ID        string    `gorm:"primaryKey;size:36"`
	TokenHash string    `gorm:"uniqueIndex;not null;size:64"`
	UserID    string    `gorm:"index;not null;size:36"`
	User      User      `gorm:"constraint:OnDelete:CASCADE"`
	Expires   time.Time `gorm:"index;not null"`
	// CreatedAt is the sign-in time, set by the caller (see CreateSession)
	// and never moved by sliding expiry: the absolute lifetime counts from it.
	CreatedAt time.Time
	// AMR is how the sign-in was made: RFC 8176 method values (and
	// latchkey's own where it has none), space-separated, e.g. "pwd otp
	// mfa", so a client can tell a two-factor session. '' for sessions
	// made before the column existed: unknown, never "one factor".
	AMR string `gorm:"column:amr;not null;default:''"`
	// Device and Network are the account page's "Firefox 128 on Linux",
	// "203.0.113.0/24"; LastSeen moves with each extension. Not read by GET /session.
	Device   string `gorm:"not null;default:''"`
	Network  string `gorm:"not null;default:''"`
	LastSeen *time.Time
}

// VerificationToken is a pending e-mail sign-in. TokenHash is
// sha256hex(token + secret) as next-auth stores it; the token itself only
// travels in the e-mail. The e-mail link carries only the token, so the
// callback looks rows up by hash alone: TokenHash has its own unique index
// (the primary key starts with Identifier and cannot serve that lookup).
type VerificationToken struct {
	Identifier string    `gorm:"primaryKey;uniqueIndex:idx_verification_identifier_token"`
	TokenHash  string    `gorm:"primaryKey;uniqueIndex:idx_verification_identifier_token;uniqueIndex:idx_verification_tokens_token_hash;size:64"`
	Expires    time.Time `gorm:"index;not null"`
}
