package signin

import (
	"context"
	"time"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// Users is the user and account storage the linking rules need.
// *models.Store implements it; tests use an in-memory fake.
type Users interface {
	UserByID(ctx context.Context, id string) (*models.User, error)
	UserByEmail(ctx context.Context, email string) (*models.User, error)
	UserByAccount(ctx context.Context, provider, providerAccountID string) (*models.User, error)
	LinkAccount(ctx context.Context, acc *models.Account) error
	CreateUserWithAccount(ctx context.Context, u *models.User, acc *models.Account) error
	AccountsOf(ctx context.Context, userID string) ([]models.Account, error)
	// UnlinkAccounts removes the user's accounts, keeping the oldest when
	// otherWay, given the ways left but them (read under the user's row
	// lock), says there is none; it counts them and says whether it kept one.
	UnlinkAccounts(ctx context.Context, userID string, otherWay func(left models.SignInWays) bool) (int64, bool, error)
	SignInMethods
}

// Tokens is the storage of pending e-mail sign-ins (hashed tokens only).
type Tokens interface {
	CreateVerificationToken(ctx context.Context, identifier, tokenHash string, expires time.Time) error
	DeleteVerificationToken(ctx context.Context, identifier, tokenHash string) error
	VerificationTokenByHash(ctx context.Context, tokenHash string) (*models.VerificationToken, error)
	RedeemVerificationToken(ctx context.Context, identifier, tokenHash string, now time.Time) (*models.User, bool, error)
}

// Browser is the requesting browser as the rules see it: the session it
// already holds and the place a new session goes. The HTTP layer makes one
// per request, bound to its request and response.
type Browser interface {
	// SignedInUser is the user id of the browser's valid session, "" when none.
	SignedInUser(ctx context.Context) (string, error)
	// SignedInSince is SignedInUser with the time that session signed in
	// (zero when unknown, which counts as long ago).
	SignedInSince(ctx context.Context) (string, time.Time, error)
	// StartSession creates a session for u in the configured strategy;
	// claims is the JWT payload (nil for database sessions).
	StartSession(ctx context.Context, u session.User, claims map[string]any) error
	// EndSession ends the browser's current session.
	EndSession(ctx context.Context) error
	// SignedInMethods is SignedInUser with how that session signed in
	// (its amr values; nil when unknown).
	SignedInMethods(ctx context.Context) (string, []string, error)
	// Cookie is the value of the request's cookie name, "" when absent
	// (the remembered-device cookie).
	Cookie(name string) string
}

// Limiter counts e-mail sign-in requests; reason names the limit that
// refused one (it is logged, so it carries no address or secret). err means
// the limits could not be checked (their counters live in the database),
// and the request is refused. *email.Limits is the one in use.
type Limiter interface {
	Allow(ctx context.Context, r email.Request, now time.Time) (ok bool, reason string, err error)
}

// Mailer delivers a sign-in link to an address.
type Mailer interface {
	SendLink(ctx context.Context, to, link string) error
}
