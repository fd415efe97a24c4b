package twofactor

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/models"
)

// Decision is the gate's answer after a first factor: start the session
// with Methods, or (Step non-nil) hold the sign-in for a second step.
type Decision struct {
	Methods []string
	Step    *Held
}

// Gate decides what a first factor leads to:
//
//	policy off, or the first factor was two (a passkey that verified the user)  → session
//	two-factor in force, the browser remembered for the user                    → session (device, mfa)
//	two-factor in force                                                         → pending code step
//	none, and the policy requires it for the user's address                     → pending enrolment
//	none                                                                        → session
//
// device is the browser's remembered-device cookie ("" when none).
func (s *Service) Gate(ctx context.Context, u *models.User, f FirstFactor, device string) (Decision, error) {
	if !s.Policy.On() || MultiFactor(f.Methods) {
		return Decision{Methods: f.Methods}, nil
	}
	row, err := s.Store.TwoFactorOf(ctx, u.ID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return Decision{}, fmt.Errorf("read two-factor: %w", err)
	}
	var held *Held
	switch on := err == nil && row.ConfirmedAt != nil; {
	case on && s.remembered(device, u.ID, row.DeviceKey):
		return Decision{Methods: WithSecond(f.Methods, MethodDevice)}, nil
	case on:
		held, err = s.hold(ctx, f, false)
	case s.Policy.Requires(u.Email):
		held, err = s.hold(ctx, f, true)
	default:
		return Decision{Methods: f.Methods}, nil
	}
	if err != nil {
		return Decision{}, err
	}
	return Decision{Step: held}, nil
}
