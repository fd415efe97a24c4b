package twofactor

import (
	"context"
	"errors"
)

// NeedsSecondFactor reports whether a session of the user that signed in
// with methods must prove the second factor before it changes what guards
// the account: a new set of recovery codes, a passkey (which itself counts
// as two factors at sign-in). A user with two-factor in force is asked for
// a session that used it (amr mfa), as Kratos asks for AAL2 and Authelia
// for its second factor: otherwise a password session from before
// two-factor was turned on (an intruder's, say) could make itself codes
// or a passkey and sign in past the code for good. A session whose second
// factor was only a remembered browser (amr device) is asked too
// (ProvedSecondFactor). A user without two-factor, or with the policy off,
// needs nothing more.
func (s *Service) NeedsSecondFactor(ctx context.Context, userID string, methods []string) (bool, error) {
	if !s.Policy.On() || ProvedSecondFactor(methods) {
		return false, nil
	}
	_, err := s.inForce(ctx, userID)
	switch {
	case errors.Is(err, ErrNotOn):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
