package twofactor

import (
	"context"
	"fmt"
	"time"
)

// reserve counts the code about to be checked as a wrong one before it is
// checked, so that however many requests arrive at once, on however many
// instances, at most freeFailures codes in a row are checked before the
// backoff (the password throttle counts in advance the same way): reading
// the block and counting afterwards let 100 parallel wrong codes on
// PostgreSQL have 53 checked. ErrThrottled while the codes are blocked.
// A right code clears the count; a wrong one keeps it (refused).
func (s *Service) reserve(ctx context.Context, userID string, now time.Time) (int, error) {
	n, ok, err := s.Store.ReserveTwoFactorCheck(ctx, userID, now, freeFailures, now.Add(firstBackoff))
	if err != nil {
		return 0, fmt.Errorf("count a code check: %w", err)
	}
	if !ok {
		return 0, ErrThrottled
	}
	return n, nil
}

// refused ends a reserved check whose code was wrong: the count stands,
// and the n-th wrong code in a row earns its backoff. ErrInvalidCode.
func (s *Service) refused(ctx context.Context, userID string, n int, now time.Time) error {
	if d := backoff(n); d > 0 {
		if err := s.Store.BackOffTwoFactor(ctx, userID, n, now.Add(d)); err != nil {
			return fmt.Errorf("count a wrong code: %w", err)
		}
	}
	return ErrInvalidCode
}
