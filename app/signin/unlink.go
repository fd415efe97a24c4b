package signin

import (
	"context"
	"fmt"
)

// UnlinkAccounts removes the OAuth identities linked to a user, as a
// password reset or "sign out everywhere" may ask: an identity linked from
// a borrowed or stolen session would otherwise outlive both. otherWay says
// the user can still sign in without them (a password, a passkey, or
// e-mail sign-in with the user's address); without one, the oldest linked
// identity, the one the account began with or linked first and so the
// least likely to be an intruder's, stays, so that the request never takes
// away the last way to sign in. It returns how many were removed.
func (s *Service) UnlinkAccounts(ctx context.Context, userID string, otherWay bool) (int64, error) {
	keep := ""
	if !otherWay {
		accounts, err := s.Users.AccountsOf(ctx, userID) // oldest first
		if err != nil {
			return 0, fmt.Errorf("list the user's accounts: %w", err)
		}
		if len(accounts) == 0 {
			return 0, nil
		}
		keep = accounts[0].ID
	}
	n, err := s.Users.UnlinkAccounts(ctx, userID, keep)
	if err != nil {
		return 0, fmt.Errorf("unlink the user's accounts: %w", err)
	}
	return n, nil
}
