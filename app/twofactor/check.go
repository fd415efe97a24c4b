package twofactor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// Used is how a code was accepted.
type Used struct {
	// Method is the amr value: MethodOTP or MethodRecovery.
	Method string
	// CodesLeft is, for a recovery code, how many remain unused.
	CodesLeft int
}

// CheckCode accepts a current authenticator code or an unused recovery
// code of the user's two-factor in force, each at most once (a code's time
// step is recorded, a recovery code spent, atomically, so a replay — from
// this instance or another — is refused). Each code counts towards the
// user's backoff before it is checked (reserve), a right one clearing the
// count; while the backoff lasts every code is refused (ErrThrottled)
// without being checked. Input that cannot be a code (wellFormed) is
// refused as a wrong code is, without counting.
func (s *Service) CheckCode(ctx context.Context, userID, code string) (Used, error) {
	row, err := s.inForce(ctx, userID)
	if err != nil {
		return Used{}, err
	}
	now := s.Now().UTC()
	code = strings.TrimSpace(code)
	if !wellFormed(code) {
		if row.BlockedUntil != nil && row.BlockedUntil.After(now) {
			return Used{}, ErrThrottled
		}
		return Used{}, ErrInvalidCode
	}
	n, err := s.reserve(ctx, userID, now)
	if err != nil {
		return Used{}, err
	}
	if isCode(code) {
		secret, err := s.open(row.Secret)
		if err != nil {
			return Used{}, err
		}
		step, err := matchStep(secret, code, now)
		if err != nil {
			return Used{}, err
		}
		if step > 0 {
			ok, err := s.Store.UseTOTPStep(ctx, userID, step)
			if err != nil {
				return Used{}, fmt.Errorf("record the code's time step: %w", err)
			}
			if ok {
				return Used{Method: MethodOTP}, nil
			}
		}
	} else {
		ok, left, err := s.useRecoveryCode(ctx, userID, code, now)
		if err != nil {
			return Used{}, err
		}
		if ok {
			return Used{Method: MethodRecovery, CodesLeft: left}, nil
		}
	}
	return Used{}, s.refused(ctx, userID, n, now)
}

// wellFormed reports whether code could be one of a user's codes at all:
// six digits, or a recovery code's shape (normalizeRecovery). Anything
// else — empty, a NUL, bytes that are not UTF-8, letters, the wrong
// length — is a slip or junk, never a guess that could have matched, so
// it spends neither an attempt of the pending step nor a step towards the
// user's backoff: counting it would let a user's slips void the step and
// start the backoff, and would slow no one guessing real codes.
func wellFormed(code string) bool {
	code = strings.TrimSpace(code)
	if isCode(code) {
		return true
	}
	_, ok := normalizeRecovery(code)
	return ok
}

// inForce is the user's confirmed two-factor row; ErrNotOn when none.
func (s *Service) inForce(ctx context.Context, userID string) (*twofactorstore.TwoFactor, error) {
	row, err := s.Store.TwoFactorOf(ctx, userID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && row.ConfirmedAt == nil) {
		return nil, ErrNotOn
	}
	if err != nil {
		return nil, fmt.Errorf("read two-factor: %w", err)
	}
	return row, nil
}
