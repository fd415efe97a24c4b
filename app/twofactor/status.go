package twofactor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// Status is a user's two-factor as the settings page and the admin
// command show it.
type Status struct {
	On           bool
	Since        time.Time
	CodesLeft    int
	BlockedUntil *time.Time // a backoff in force, if any
}

// StatusOf reads the user's two-factor.
func (s *Service) StatusOf(ctx context.Context, userID string) (Status, error) {
	row, err := s.inForce(ctx, userID)
	if errors.Is(err, ErrNotOn) {
		return Status{}, nil
	}
	if err != nil {
		return Status{}, err
	}
	codes, err := s.Store.UnusedRecoveryCodes(ctx, userID)
	if err != nil {
		return Status{}, fmt.Errorf("read recovery codes: %w", err)
	}
	st := Status{On: true, Since: *row.ConfirmedAt, CodesLeft: len(codes)}
	if row.BlockedUntil != nil && row.BlockedUntil.After(s.Now()) {
		st.BlockedUntil = row.BlockedUntil
	}
	return st, nil
}

// Disable turns the user's two-factor off with a current code or a
// recovery code: the secret, the recovery codes, the pending steps and
// (with the device key) every remembered browser go. A user the policy
// requires it of (Policy.Requires) may not: ErrRequired, asked before the
// code is checked, so no code is spent and nothing changes; otherwise
// the next sign-in would only make them enrol again, and a session
// without the second factor could have turned it off in between.
func (s *Service) Disable(ctx context.Context, u *models.User, code string) error {
	if s.MayNotDisable(u) {
		return ErrRequired
	}
	if _, err := s.CheckCode(ctx, u.ID, code); err != nil {
		return err
	}
	return s.Reset(ctx, u.ID)
}

// MayNotDisable reports whether the policy requires two-factor of u, so
// the settings page offers no way to turn it off.
func (s *Service) MayNotDisable(u *models.User) bool { return s.Policy.Requires(u.Email) }

// Reset removes the user's two-factor without a code (the admin command,
// and Disable once the code is checked). A user without it is ErrNotOn.
func (s *Service) Reset(ctx context.Context, userID string) error {
	ok, err := s.Store.DeleteTwoFactor(ctx, userID)
	if err != nil {
		return fmt.Errorf("remove two-factor: %w", err)
	}
	if !ok {
		return ErrNotOn
	}
	return nil
}
