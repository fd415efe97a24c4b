package signin

import (
	"context"
	"fmt"
)

// UnlinkAccounts removes the OAuth identities linked to a user, as a
// password reset or "sign out everywhere" may ask: an identity linked from
// a borrowed or stolen session would otherwise outlive both. When the user
// could not sign in without them (WaysOffered.CanSignIn, decided in the
// removal's transaction, so a passkey removed at the same moment is
// counted as gone), the oldest linked identity, the one the account began
// with or linked first and so the least likely to be an intruder's, stays,
// so that the request never takes away the last way to sign in. It
// returns how many were removed and whether one was kept.
func (s *Service) UnlinkAccounts(ctx context.Context, userID string, offered WaysOffered) (int64, bool, error) {
	n, kept, err := s.Users.UnlinkAccounts(ctx, userID, offered.CanSignIn)
	if err != nil {
		return 0, false, fmt.Errorf("unlink the user's accounts: %w", err)
	}
	return n, kept, nil
}
