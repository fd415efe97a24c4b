package signin

import (
	"context"
	"fmt"

	"github.com/latchkey-auth/latchkey/models"
)

// SignInMethods tells whether a user can sign in without its e-mail
// address. *models.Store implements it.
type SignInMethods interface {
	// HasSignInMethod reports a linked account, a passkey or a password.
	HasSignInMethod(ctx context.Context, userID string) (bool, error)
}

// StandIn is the user next-auth shows the SignIn hook for an address no
// stored user is known to own: its id is the address itself.
func StandIn(addr string) *models.User {
	e := addr
	return &models.User{ID: addr, Email: &e}
}

// isStandIn reports whether u is a StandIn rather than a stored user.
func isStandIn(u *models.User) bool { return u.Email != nil && u.ID == *u.Email }

// UnprovedClaim is the one unverified-address rule. A user whose address
// came unverified from an OAuth provider, and who can sign in some other
// way (an account, a passkey, a password), may be whoever typed the
// victim's address there ("nOAuth" account pre-hijacking): it holds the
// address without proof. Such a claimant is never signed into by a proof
// of the address (an e-mailed link, a completed sign-up or reset), never
// mailed a link that would take the address from it, and never blocks the
// owner: the owner's proof wins (models.releaseUnproved). Users created by
// an e-mail link, or by a provider that verifies addresses, carry
// emailVerified; a user without an address or a stand-in claims nothing.
func UnprovedClaim(ctx context.Context, m SignInMethods, u *models.User) (bool, error) {
	if u.EmailVerified != nil || u.Email == nil || isStandIn(u) {
		return false, nil
	}
	has, err := m.HasSignInMethod(ctx, u.ID)
	if err != nil {
		return false, fmt.Errorf("look up the user's sign-in methods: %w", err)
	}
	return has, nil
}
