package signin

import "github.com/latchkey-auth/latchkey/models"

// WaysOffered is which ways to sign in the configuration offers, as the
// rule about the last way in needs it.
type WaysOffered struct {
	Email     bool // an e-mail provider (sign-in links)
	Passwords bool // a credentials provider
	Passkeys  bool // a webauthn provider
}

// CanSignIn is the one rule about the last way in: a user with ways w can
// still sign in with a linked identity, a passkey, a password or an
// e-mailed link to a verified address, as far as o offers each. An
// unverified address is no way in: its e-mailed link may be refused as
// an unproved claim (UnprovedClaim). Removals decide on it under the
// user's row lock (models.Store.LockSignInWays).
func (o WaysOffered) CanSignIn(w models.SignInWays) bool {
	return w.Accounts > 0 ||
		(o.Passkeys && w.Passkeys > 0) ||
		(o.Passwords && w.Password) ||
		(o.Email && w.Email != "" && w.EmailVerified)
}
