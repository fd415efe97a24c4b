package accounts

import (
	"context"

	"github.com/latchkey-auth/latchkey/models"
)

// Linked sign-in methods (OAuth identities linked to an existing user)
// outlive every session and a password reset. So a link is told to the
// user's address (TellMethodAdded), and a reset or "sign out everywhere"
// may remove them: a link made from a borrowed or stolen session does not
// stay a way into the account.

// TellMethodAdded mails the user's verified address that an identity at
// provider (its display name) was linked to the account. A mail that
// fails does not undo the link (the sign-in went through): it is logged,
// once, without the address. An unverified address is not told: its
// holder may not be its owner.
func (s *Service) TellMethodAdded(ctx context.Context, u *models.User, providerID, providerName string) {
	if u.Email == nil || *u.Email == "" || u.EmailVerified == nil || s.Mail == nil {
		return
	}
	s.notify(ctx, *u.Email, "sign-in method linked, but the notice e-mail failed",
		func(ctx context.Context) error { return s.Mail.MethodAdded(ctx, *u.Email, providerName) }, "user", u.ID, "provider", providerID)
}

// TellTwoFactor tells the user's verified address about a two-factor
// change, as TellMethodAdded: a failure is logged and stops nothing.
func (s *Service) TellTwoFactor(ctx context.Context, u *models.User, event TwoFactorEvent, left int) {
	if u.Email == nil || *u.Email == "" || u.EmailVerified == nil || s.Mail == nil {
		return
	}
	s.notify(ctx, *u.Email, "two-factor changed, but the notice e-mail failed",
		func(ctx context.Context) error { return s.Mail.TwoFactorChanged(ctx, *u.Email, event, left) }, "user", u.ID)
}

// removeLinked removes the user's linked sign-in methods
// (signin.Service.UnlinkAccounts: never the last way to sign in, decided
// under the user's row lock).
func (s *Service) removeLinked(ctx context.Context, u *models.User) error {
	n, kept, err := s.Core.UnlinkAccounts(ctx, u.ID, s.Offered.ways())
	if err != nil {
		return err
	}
	s.Log.Info("linked sign-in methods removed", "user", u.ID, "removed", n, "oldest_kept", kept)
	return nil
}

// passwordSignIn reports whether the user can sign in with a password: a
// credentials provider is configured and they have one.
func (s *Service) passwordSignIn(ctx context.Context, userID string) (bool, error) {
	if !s.Offered.Passwords {
		return false, nil
	}
	return s.HasPassword(ctx, userID)
}
