package openid

import (
	"context"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// ErrNotFound (models.ErrNotFound) is what a Store answers for a row that does not exist (or has
// expired, for rows with an expiry).
var ErrNotFound = models.ErrNotFound

// Store is the OpenID Provider's storage (models/openidstore implements it
// on both dialects). Every method is one statement or one transaction;
// every "claim" is a conditional UPDATE, so two instances racing for one
// code or one refresh token cannot both win.
type Store interface {
	// Auth requests (from /authorize until they expire).
	CreateAuthRequest(ctx context.Context, r *openidstore.AuthRequest) error
	// AuthRequest returns the unexpired request id (ErrNotFound).
	AuthRequest(ctx context.Context, id string, now time.Time) (*openidstore.AuthRequest, error)
	// AuthRequestByCode returns the unexpired request whose code hashes to
	// codeHash, exchanged or not (ErrNotFound).
	AuthRequestByCode(ctx context.Context, codeHash string, now time.Time) (*openidstore.AuthRequest, error)
	// AskedLogin records that the request sent the browser to sign in again.
	AskedLogin(ctx context.Context, id string, at time.Time) error
	// CompleteAuthRequest records who completed the request and how they
	// signed in; false when it is unknown, expired or already completed.
	CompleteAuthRequest(ctx context.Context, id, userID string, authTime time.Time, amr string, now time.Time) (bool, error)
	// EndAuthRequest ends a request not completed (its error was sent to
	// the client); false when it is unknown, expired or completed.
	EndAuthRequest(ctx context.Context, id string, now time.Time) (bool, error)
	// SaveCode stores the hash of the code handed out for a completed
	// request; false when the request already has one (a code is issued once).
	SaveCode(ctx context.Context, id, codeHash string) (bool, error)
	// ExchangeCode marks the request's code exchanged and writes the
	// tokens it issues (refresh may be nil), in one transaction; false
	// (and nothing written) when it already was exchanged (a reuse).
	ExchangeCode(ctx context.Context, id string, now time.Time, access, refresh *openidstore.Token) (bool, error)

	// Tokens.
	// RotateRefresh marks the refresh token oldID used and writes the new
	// pair, in one transaction; false (and nothing written) when oldID was
	// already used or revoked.
	RotateRefresh(ctx context.Context, oldID string, now time.Time, access, refresh *openidstore.Token) (bool, error)
	// RefreshToken returns the refresh token whose hash is hash, whatever
	// its state (used, revoked, expired: the caller decides); ErrNotFound.
	RefreshToken(ctx context.Context, hash string) (*openidstore.Token, error)
	// Token returns the token id, whatever its state; ErrNotFound.
	Token(ctx context.Context, id string) (*openidstore.Token, error)
	// RevokeToken revokes one token (no-op when revoked or unknown).
	RevokeToken(ctx context.Context, id string, now time.Time) error
	// RevokeFamily revokes every token of the family; it returns how many
	// were still unrevoked.
	RevokeFamily(ctx context.Context, familyID string, now time.Time) (int64, error)
	// RevokeGrants revokes every token of userID for clientID ("" for
	// every client).
	RevokeGrants(ctx context.Context, userID, clientID string, now time.Time) (int64, error)
	// RevokedNotBefore is the latest "not before" of the user's (and
	// everyone's, models.AllUsers) session revocations (zero: none), from
	// session_revocations: a token whose sign-in was earlier is refused.
	RevokedNotBefore(ctx context.Context, userID string) (time.Time, error)

	// Consents.
	Consent(ctx context.Context, userID, clientID string) (*openidstore.Consent, error) // ErrNotFound
	// SaveConsent records (or widens) the user's consent to the client.
	SaveConsent(ctx context.Context, userID, clientID, scopes string, now time.Time) error
	// Consents lists the user's consents, newest first.
	Consents(ctx context.Context, userID string) ([]openidstore.Consent, error)
	// DeleteConsent forgets the consent and revokes the user's tokens for
	// the client, in one transaction; false when there was none.
	DeleteConsent(ctx context.Context, userID, clientID string, now time.Time) (bool, error)

	// Clients added by an admin.
	Client(ctx context.Context, id string) (*openidstore.Client, error) // ErrNotFound
	Clients(ctx context.Context) ([]openidstore.Client, error)
	// AddClient refuses an id already used (an error naming it).
	AddClient(ctx context.Context, c *openidstore.Client) error
	// RotateClientSecret replaces the hash, keeping the one it replaces
	// until previousUntil when that is after now; false when there is no
	// such client.
	RotateClientSecret(ctx context.Context, id, secretHash string, previousUntil, now time.Time) (bool, error)
	// EndPreviousSecret stops the secret a rotation kept; false when the
	// client has none.
	EndPreviousSecret(ctx context.Context, id string, now time.Time) (bool, error)
	// RemoveClient deletes the client, its consents and its tokens; false
	// when there was none.
	RemoveClient(ctx context.Context, id string) (bool, error)

	// Signing keys.
	// SigningKeys returns the keys still published at now (PublishedUntil
	// nil or after now), oldest first.
	SigningKeys(ctx context.Context, now time.Time) ([]openidstore.SigningKey, error)
	// RotateKeys adds keys and, in the same transaction, sets
	// PublishedUntil = retireAt on every older key of the same algorithm
	// that had none. With no key yet, it just adds.
	RotateKeys(ctx context.Context, keys []openidstore.SigningKey, retireAt time.Time) error
	// FirstKeys adds keys only if no key is published at now, atomically
	// (instances starting at once store one set), and returns the keys
	// published then, oldest first.
	FirstKeys(ctx context.Context, keys []openidstore.SigningKey, now time.Time) ([]openidstore.SigningKey, error)

	// UserByID is the user (models.ErrNotFound: gone).
	UserByID(ctx context.Context, id string) (*models.User, error)

	// Purge deletes expired auth requests and tokens, and keys no longer
	// published, and clears the previous secrets whose overlap is over; it
	// returns how many rows went or were cleared.
	Purge(ctx context.Context, now time.Time) (int64, error)
}
