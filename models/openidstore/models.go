package openidstore

import (
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// Client is an OpenID Connect client added by an admin (`latchkey clients
// add`); clients written in config.yaml are not stored. A public client has
// no secret (PKCE only); a confidential one keeps the SHA-256 of its
// generated 256-bit secret, never the secret.
type Client struct {
	ID         string `gorm:"primaryKey"`
	Name       string `gorm:"not null"`
	SecretHash string `gorm:"not null"` // hex SHA-256; "" for a public client
	// PreviousSecretHash is the hash a rotation replaced, still accepted
	// until PreviousSecretUntil so that relying parties can be redeployed
	// ("" and nil: none).
	PreviousSecretHash  string `gorm:"not null;default:''"`
	PreviousSecretUntil *time.Time
	Public              bool `gorm:"not null"`
	// The lists are space-separated (URIs hold no spaces; scopes neither).
	RedirectURIs           string `gorm:"column:redirect_uris;not null"`
	PostLogoutRedirectURIs string `gorm:"column:post_logout_redirect_uris;not null"`
	Scopes                 string `gorm:"not null"`
	FirstParty             bool   `gorm:"not null"`
	// RefreshTokens: refresh tokens without the offline_access scope.
	RefreshTokens bool `gorm:"not null"`
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// TableName is oidc_clients.
func (Client) TableName() string { return "oidc_clients" }

// AuthRequest is one authorization request, from /authorize until its code
// is exchanged (then kept, exchanged, until it expires, so a reused code is
// told apart from an unknown one and revokes what it issued).
type AuthRequest struct {
	ID                  string `gorm:"primaryKey"`
	ClientID            string `gorm:"not null"`
	RedirectURI         string `gorm:"column:redirect_uri;not null"`
	Scopes              string `gorm:"not null"` // space-separated
	State               string `gorm:"not null"`
	Nonce               string `gorm:"not null"`
	ResponseType        string `gorm:"not null"`
	ResponseMode        string `gorm:"not null"`
	CodeChallenge       string `gorm:"not null"`
	CodeChallengeMethod string `gorm:"not null"`
	Prompt              string `gorm:"not null"` // space-separated
	MaxAge              *int64 // seconds; nil: none asked
	LoginHint           string `gorm:"not null"`
	// HintSubject is the subject of the request's id_token_hint ("":
	// none): the user the client expects to be signed in.
	HintSubject string `gorm:"not null"`
	UILocales   string `gorm:"column:ui_locales;not null"`
	// Set when the user completes the request (signed in, consented).
	UserID   *string `gorm:"size:36"`
	AuthTime *time.Time
	AMR      string `gorm:"column:amr;not null"` // space-separated amr values
	DoneAt   *time.Time
	// LoginAskedAt: prompt=login or max_age sent the browser to sign in
	// again at this time; a sign-in after it is fresh.
	LoginAskedAt *time.Time
	// CodeHash is the SHA-256 of the code handed out (nil before).
	CodeHash    *string `gorm:"uniqueIndex:idx_oidc_auth_requests_code_hash;size:64"`
	ExchangedAt *time.Time
	CreatedAt   time.Time
	Expires     time.Time `gorm:"index:idx_oidc_auth_requests_expires;not null"`
}

// TableName is oidc_auth_requests.
func (AuthRequest) TableName() string { return "oidc_auth_requests" }

// Token is an access token or a refresh token issued to a client for a
// user. Access tokens are opaque to clients (the OP library seals the id
// and subject); refresh tokens are random, stored as TokenHash (SHA-256).
// Every token a code's exchange led to, through any number of refreshes,
// shares FamilyID (the auth request's id): a reused refresh token or code
// revokes the family.
type Token struct {
	ID        string      `gorm:"primaryKey"`
	Kind      string      `gorm:"not null"` // "access" or "refresh"
	TokenHash *string     `gorm:"uniqueIndex:idx_oidc_tokens_token_hash;size:64"`
	FamilyID  string      `gorm:"index:idx_oidc_tokens_family_id;not null"`
	UserID    string      `gorm:"index:idx_oidc_tokens_user_id;not null;size:36"`
	User      models.User `gorm:"constraint:OnDelete:CASCADE"`
	ClientID  string      `gorm:"not null"`
	Scopes    string      `gorm:"not null"`
	Audience  string      `gorm:"not null"` // space-separated
	AuthTime  time.Time   `gorm:"not null"`
	AMR       string      `gorm:"column:amr;not null"`
	Expires   time.Time   `gorm:"index:idx_oidc_tokens_expires;not null"`
	UsedAt    *time.Time  // refresh: rotated (a second use is a reuse)
	RevokedAt *time.Time
	CreatedAt time.Time
}

// TableName is oidc_tokens.
func (Token) TableName() string { return "oidc_tokens" }

// Consent is a user's consent to a client for some scopes.
type Consent struct {
	UserID    string      `gorm:"primaryKey;size:36"`
	User      models.User `gorm:"constraint:OnDelete:CASCADE"`
	ClientID  string      `gorm:"primaryKey"`
	Scopes    string      `gorm:"not null"` // space-separated, every scope granted so far
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName is oidc_consents.
func (Consent) TableName() string { return "oidc_consents" }

// SigningKey is one of the OP's signing keys: published in the JWKS from
// CreatedAt, signing from ActiveFrom until a newer key's ActiveFrom, and
// published until PublishedUntil (set at rotation: when the tokens it
// signed have expired).
type SigningKey struct {
	ID         string `gorm:"primaryKey"`                 // the kid
	Algorithm  string `gorm:"not null"`                   // RS256 or ES256
	PublicJWK  string `gorm:"column:public_jwk;not null"` // JSON
	PrivateKey string `gorm:"not null"`                   // PKCS #8, sealed under the service secret
	CreatedAt  time.Time
	ActiveFrom time.Time `gorm:"not null"`
	// PublishedUntil: nil while the key is the newest of its algorithm.
	PublishedUntil *time.Time
}

// TableName is oidc_signing_keys.
func (SigningKey) TableName() string { return "oidc_signing_keys" }
