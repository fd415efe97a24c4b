package twofactor

import (
	"context"
	"encoding/base32"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models"
)

// Enrolment is a secret waiting to be confirmed, as the setup page shows
// it: the otpauth:// URI (for the QR code) and the secret itself (base32,
// for typing in).
type Enrolment struct {
	URI    string
	Secret string
}

// Enrol begins (or shows again) the user's enrolment: an unconfirmed
// secret, stored sealed. The same secret is shown until it is confirmed,
// so a page reloaded after the app scanned it still matches the app.
// account names the user in the app (their address, or name).
func (s *Service) Enrol(ctx context.Context, userID, account string) (*Enrolment, error) {
	row, err := s.Store.TwoFactorOf(ctx, userID)
	switch {
	case err == nil && row.ConfirmedAt != nil:
		return nil, ErrAlreadyOn
	case err == nil:
		secret, err := s.open(row.Secret)
		if err == nil {
			raw, derr := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
			if k, kerr := s.newKey(account, raw); derr == nil && kerr == nil {
				return &Enrolment{URI: k.URL(), Secret: k.Secret()}, nil
			}
		}
		// An unreadable secret (a secret no longer configured) is replaced.
	case !errors.Is(err, models.ErrNotFound):
		return nil, fmt.Errorf("read two-factor: %w", err)
	}
	k, err := s.newKey(account, nil)
	if err != nil {
		return nil, err
	}
	sealed, err := s.seal(k.Secret())
	if err != nil {
		return nil, err
	}
	if err := s.Store.BeginTwoFactor(ctx, userID, sealed, random.Base64URL(16), s.Now().UTC()); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return nil, ErrAlreadyOn
		}
		return nil, fmt.Errorf("store the new two-factor secret: %w", err)
	}
	return &Enrolment{URI: k.URL(), Secret: k.Secret()}, nil
}

// Confirm puts the user's enrolment in force with a current code from the
// app: the code's step counts as used, a first set of recovery codes
// replaces any, and the codes are returned to show once. A code counts
// towards the backoff before it is checked, as any other (reserve).
func (s *Service) Confirm(ctx context.Context, userID, code string) ([]string, error) {
	row, err := s.Store.TwoFactorOf(ctx, userID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, ErrNotOn
	case err != nil:
		return nil, fmt.Errorf("read two-factor: %w", err)
	case row.ConfirmedAt != nil:
		return nil, ErrAlreadyOn
	}
	now := s.Now().UTC()
	n, err := s.reserve(ctx, userID, now)
	if err != nil {
		return nil, err
	}
	if !isCode(code) { // not six digits: refused, not counted (wellFormed)
		return nil, ErrInvalidCode
	}
	secret, err := s.open(row.Secret)
	if err != nil {
		return nil, err
	}
	step, err := matchStep(secret, code, now)
	if err != nil {
		return nil, err
	}
	if step == 0 {
		return nil, s.refused(ctx, userID, n, now)
	}
	codes, hashes := s.newRecoveryCodes()
	ok, err := s.Store.ConfirmTwoFactor(ctx, userID, step, hashes, now)
	if err != nil {
		return nil, fmt.Errorf("put two-factor in force: %w", err)
	}
	if !ok {
		return nil, ErrAlreadyOn // confirmed by a concurrent request
	}
	return codes, nil
}
