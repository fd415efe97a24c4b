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
	return s.on(ctx, userID)
}

// MustEnrol reports whether the policy requires two-factor of a user with
// address addr while none is in force for them: such a user may have no
// session (the gate holds every sign-in for the enrolment). An address
// change into required_for asks it, since it makes a user required after
// their sessions began.
func (s *Service) MustEnrol(ctx context.Context, userID string, addr *string) (bool, error) {
	if !s.Policy.Requires(addr) {
		return false, nil
	}
	on, err := s.on(ctx, userID)
	return !on && err == nil, err
}

// on reports whether the user has two-factor in force.
func (s *Service) on(ctx context.Context, userID string) (bool, error) {
	_, err := s.inForce(ctx, userID)
	if errors.Is(err, ErrNotOn) {
		return false, nil
	}
	return err == nil, err
}
