package twofactor

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models"
)

// EnrolLifetime is how long a secret shown by the setup page waits for its
// code: long enough to find the phone and scan it, short enough that a
// page left open is no standing offer.
const EnrolLifetime = 10 * time.Minute

// Enrolment is a secret waiting to be confirmed, as the setup page shows
// it: the otpauth:// URI (for the QR code) and the secret itself (base32,
// for typing in).
type Enrolment struct {
	URI    string
	Secret string
}

// pending is an unconfirmed row's sealed value: the secret, the browser it
// was shown to (the SHA-256 of the caller's per-browser key) and when.
type pending struct {
	Secret  string `json:"s"`
	Browser string `json:"b"`
	At      int64  `json:"t"`
}

// Enrol begins (or shows again) the user's enrolment: an unconfirmed
// secret, stored sealed with the browser it is shown to. browser is a
// value only that browser holds (its CSRF token, or its pending step's
// token hash). The same secret is shown again only to the same browser
// within EnrolLifetime, so a page reloaded after the app scanned it still
// matches the app; any other browser, or a later visit, gets a new secret
// and the old one is gone. (A secret shown to whoever once opened the page
// — a borrowed session, a password's pending enrolment — was shown again,
// without limit, to the owner's later enrolment, and its holder could make
// codes; Authelia and Kratos make a new secret per registration too.)
// account names the user in the app (their address, or name).
func (s *Service) Enrol(ctx context.Context, userID, account, browser string) (*Enrolment, error) {
	row, err := s.Store.TwoFactorOf(ctx, userID)
	switch {
	case err == nil && row.ConfirmedAt != nil:
		return nil, ErrAlreadyOn
	case err == nil:
		if p, ok := s.openPending(row.Secret, browser); ok {
			raw, derr := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(p.Secret)
			if k, kerr := s.newKey(account, raw); derr == nil && kerr == nil {
				return &Enrolment{URI: k.URL(), Secret: k.Secret()}, nil
			}
		}
		// Another browser's, too old, or unreadable: replaced.
	case !errors.Is(err, models.ErrNotFound):
		return nil, fmt.Errorf("read two-factor: %w", err)
	}
	k, err := s.newKey(account, nil)
	if err != nil {
		return nil, err
	}
	sealed, err := securecookie.EncodeMulti("totp-enrolment", pending{Secret: k.Secret(), Browser: browserHash(browser), At: s.Now().Unix()}, s.secrets[0])
	if err != nil {
		return nil, fmt.Errorf("seal the new TOTP secret: %w", err)
	}
	if err := s.Store.BeginTwoFactor(ctx, userID, sealed, random.Base64URL(16), s.Now().UTC()); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return nil, ErrAlreadyOn
		}
		return nil, fmt.Errorf("store the new two-factor secret: %w", err)
	}
	return &Enrolment{URI: k.URL(), Secret: k.Secret()}, nil
}

// openPending is an unconfirmed row's secret when it was shown to browser
// within EnrolLifetime; false otherwise.
func (s *Service) openPending(sealed, browser string) (pending, bool) {
	var p pending
	if err := securecookie.DecodeMulti("totp-enrolment", sealed, &p, s.secrets...); err != nil {
		return pending{}, false
	}
	age := s.Now().Sub(time.Unix(p.At, 0))
	if p.Browser != browserHash(browser) || browser == "" || age < 0 || age > EnrolLifetime {
		return pending{}, false
	}
	return p, true
}

func browserHash(browser string) string {
	sum := sha256.Sum256([]byte("latchkey two-factor enrolment " + browser))
	return hex.EncodeToString(sum[:])
}

// Confirm puts the user's enrolment in force with a current code from the
// app, from the browser it was shown to (browser as given to Enrol) within
// EnrolLifetime: the code's step counts as used, a first set of recovery
// codes replaces any, and the codes are returned to show once. Any other
// browser's code, or a late one, is ErrInvalidCode. A code counts towards
// the backoff before it is checked, as any other (reserve). Blanks around
// the code (pasted) are not part of it, as at sign-in (CheckCode).
func (s *Service) Confirm(ctx context.Context, userID, code, browser string) ([]string, error) {
	code = strings.TrimSpace(code)
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
	if !isCode(code) { // not six digits: refused, not counted (wellFormed)
		if row.BlockedUntil != nil && row.BlockedUntil.After(now) {
			return nil, ErrThrottled
		}
		return nil, ErrInvalidCode
	}
	n, err := s.reserve(ctx, userID, now)
	if err != nil {
		return nil, err
	}
	var step int64
	p, mine := s.openPending(row.Secret, browser)
	if mine {
		if step, err = matchStep(p.Secret, code, now); err != nil {
			return nil, err
		}
	}
	if step == 0 {
		return nil, s.refused(ctx, userID, n, now)
	}
	sealed, err := s.seal(p.Secret)
	if err != nil {
		return nil, err
	}
	codes, hashes := s.newRecoveryCodes()
	ok, err := s.Store.ConfirmTwoFactor(ctx, userID, row.Secret, sealed, step, hashes, now)
	if err != nil {
		return nil, fmt.Errorf("put two-factor in force: %w", err)
	}
	if !ok { // confirmed by a concurrent request, or replaced by another browser's setup
		if row, err := s.Store.TwoFactorOf(ctx, userID); err == nil && row.ConfirmedAt != nil {
			return nil, ErrAlreadyOn
		}
		return nil, ErrInvalidCode
	}
	return codes, nil
}
