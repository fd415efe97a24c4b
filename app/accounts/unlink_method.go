package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/models"
)

// LinkedAccounts are the user's linked identities, oldest first.
func (s *Service) LinkedAccounts(ctx context.Context, userID string) ([]models.Account, error) {
	list, err := s.Store.AccountsOf(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("list the user's accounts: %w", err)
	}
	return list, nil
}

// UnlinkMethod removes one OAuth identity linked to the user, for a
// session that may (Privileged: a recent sign-in, with the second factor
// once it is on), never the last way to sign
// in (signin.WaysOffered.CanSignIn: another linked identity, a password, a
// passkey, or e-mail sign-in with a verified address must remain). The address is told, so an unlink
// from a borrowed session does not go unnoticed. providerName names the
// provider for the e-mail.
func (s *Service) UnlinkMethod(ctx context.Context, who SignedIn, u *models.User, accountID string, providerName func(id string) string) error {
	if err := s.Privileged(ctx, who); err != nil {
		return err
	}
	accounts, err := s.Store.AccountsOf(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("list the user's accounts: %w", err)
	}
	var target *models.Account
	for i := range accounts {
		if accounts[i].ID == accountID {
			target = &accounts[i]
		}
	}
	if target == nil {
		return ErrNoSuchMethod
	}
	// Whether it is the last way in is decided in the unlink's transaction,
	// so a passkey removed at the same moment cannot leave neither.
	ok, err := s.Centre.UnlinkAccount(ctx, u.ID, accountID, func(left models.SignInWays) error {
		if !s.Offered.ways().CanSignIn(left) {
			return ErrLastMethod
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrLastMethod):
		return ErrLastMethod
	case err != nil:
		return fmt.Errorf("unlink: %w", err)
	}
	if !ok {
		return ErrNoSuchMethod
	}
	s.Log.Info("sign-in method unlinked", "user", u.ID, "provider", target.Provider)
	if u.Email != nil && *u.Email != "" && u.EmailVerified != nil && s.Mail != nil {
		s.notify(ctx, *u.Email, "sign-in method unlinked, but the notice e-mail failed",
			func(ctx context.Context) error {
				return s.Mail.MethodRemoved(ctx, *u.Email, providerName(target.Provider))
			}, "user", u.ID)
	}
	return nil
}
