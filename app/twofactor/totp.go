package twofactor

import (
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// RFC 6238's defaults, which every authenticator app understands: SHA-1,
// six digits, 30-second steps, and one step of clock drift either way.
const (
	period = 30
	skew   = 1
)

var codeOpts = totp.ValidateOpts{Period: period, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// newKey is the key of secret for an account, with its otpauth:// URI; a
// nil secret is a new one (160 random bits, as RFC 4226 advises).
func (s *Service) newKey(account string, secret []byte) (*otp.Key, error) {
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer: s.Issuer, AccountName: account, Period: period, SecretSize: 20, Secret: secret,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
	})
	if err != nil {
		return nil, fmt.Errorf("generate a TOTP secret: %w", err)
	}
	return k, nil
}

// matchStep is the time step whose code is code, among now's and one
// either side; 0 when none. Every candidate is made and compared in
// constant time, so the time taken does not tell which step matched.
func matchStep(secret, code string, now time.Time) (int64, error) {
	var found int64
	for i := -skew; i <= skew; i++ {
		t := now.Add(time.Duration(i*period) * time.Second)
		want, err := totp.GenerateCodeCustom(secret, t, codeOpts)
		if err != nil {
			return 0, fmt.Errorf("make a TOTP code: %w", err)
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && found == 0 {
			found = t.Unix() / period
		}
	}
	return found, nil
}

// isCode reports whether v looks like a six-digit code.
func isCode(v string) bool {
	if len(v) != 6 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// seal and open keep the TOTP secret encrypted at rest under the service
// secret; opening tries every configured secret.
func (s *Service) seal(secret string) (string, error) {
	v, err := securecookie.EncodeMulti("totp", secret, s.secrets[0])
	if err != nil {
		return "", fmt.Errorf("seal the TOTP secret: %w", err)
	}
	return v, nil
}

func (s *Service) open(sealed string) (string, error) {
	var secret string
	if err := securecookie.DecodeMulti("totp", sealed, &secret, s.secrets...); err != nil {
		return "", fmt.Errorf("open the TOTP secret (was the service secret changed without AUTH_SECRET_1?): %w", err)
	}
	return secret, nil
}
