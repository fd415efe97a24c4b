package twofactor

import (
	"context"
	"crypto/subtle"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/app/random"
)

// Recovery codes are twelve base32 letters and digits (60 random bits),
// shown as xxxx-xxxx-xxxx; what is typed is read without case, spaces or
// dashes. They are stored as keyed hashes (Hashes, under a purpose of
// their own), so the database alone gives none of them away.
const recoveryLen = 12

var recoveryAlphabet = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newRecoveryCodes makes a set of codes and their stored hashes.
func (s *Service) newRecoveryCodes() (codes, hashes []string) {
	for range recoveryCount {
		c := recoveryAlphabet.EncodeToString(random.Bytes(8))[:recoveryLen]
		codes = append(codes, c[:4]+"-"+c[4:8]+"-"+c[8:])
		hashes = append(hashes, s.recoveryHashes(c)[0])
	}
	return codes, hashes
}

func (s *Service) recoveryHashes(normalized string) []string {
	return s.Hashes("latchkey recovery code " + normalized)
}

// normalizeRecovery is a typed recovery code without case, spaces and
// dashes; ok is false for anything that cannot be one.
func normalizeRecovery(v string) (string, bool) {
	v = strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(v))
	if len(v) != recoveryLen {
		return "", false
	}
	for _, c := range v {
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return "", false
		}
	}
	return v, true
}

// useRecoveryCode spends the user's unused code matching typed, comparing
// every stored hash in constant time; false when none matches or another
// request spent it first. left is how many remain unused after it.
func (s *Service) useRecoveryCode(ctx context.Context, userID, typed string, now time.Time) (ok bool, left int, err error) {
	code, valid := normalizeRecovery(typed)
	if !valid {
		return false, 0, nil
	}
	rows, err := s.Store.UnusedRecoveryCodes(ctx, userID)
	if err != nil {
		return false, 0, fmt.Errorf("read recovery codes: %w", err)
	}
	match := ""
	for _, h := range s.recoveryHashes(code) {
		for _, r := range rows {
			if subtle.ConstantTimeCompare([]byte(h), []byte(r.CodeHash)) == 1 {
				match = r.ID
			}
		}
	}
	if match == "" {
		return false, 0, nil
	}
	used, err := s.Store.UseRecoveryCode(ctx, userID, match, now)
	if err != nil {
		return false, 0, fmt.Errorf("spend a recovery code: %w", err)
	}
	return used, len(rows) - 1, nil
}

// RegenerateRecoveryCodes replaces the user's recovery codes with a new
// set, returned once; the old ones stop working.
func (s *Service) RegenerateRecoveryCodes(ctx context.Context, userID string) ([]string, error) {
	codes, hashes := s.newRecoveryCodes()
	ok, err := s.Store.ReplaceRecoveryCodes(ctx, userID, hashes, s.Now().UTC())
	if err != nil {
		return nil, fmt.Errorf("replace recovery codes: %w", err)
	}
	if !ok {
		return nil, ErrNotOn
	}
	return codes, nil
}
