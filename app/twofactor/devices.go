package twofactor

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/random"
)

// A remembered device is a sealed cookie naming the user and their current
// device key. Forgetting every device of a user is a new key (ForgetDevices:
// password reset, sign-out everywhere, an admin); turning two-factor off
// removes the row and its key, and a new enrolment gets a fresh one.
type device struct {
	User string `json:"u"`
	Key  string `json:"k"`
}

// RememberDevice is the cookie that lets this browser skip the code for
// the user for Policy.RememberFor; "" when remembering is off.
func (s *Service) RememberDevice(ctx context.Context, userID string) (string, time.Time, error) {
	if s.Policy.RememberFor <= 0 {
		return "", time.Time{}, nil
	}
	row, err := s.inForce(ctx, userID)
	if err != nil {
		return "", time.Time{}, err
	}
	v, err := securecookie.EncodeMulti("device", device{User: userID, Key: row.DeviceKey}, s.devices[0])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("seal the remembered device: %w", err)
	}
	return v, s.Now().Add(s.Policy.RememberFor), nil
}

// remembered reports whether cookie remembers this browser for the user
// whose current device key is key.
func (s *Service) remembered(cookie, userID, key string) bool {
	if cookie == "" || s.Policy.RememberFor <= 0 || key == "" {
		return false
	}
	var d device
	if err := securecookie.DecodeMulti("device", cookie, &d, s.devices...); err != nil {
		return false
	}
	return d.User == userID && subtle.ConstantTimeCompare([]byte(d.Key), []byte(key)) == 1
}

// ForgetDevices forgets every browser the user asked to remember, and
// ends the user's pending second steps: what takes the browsers back (a
// password reset or change, signing out everywhere) takes back the sign-ins
// half done before it too. A pending enrolment (under `required`) kept past
// a password reset let whoever had the old password enrol their own app
// and have a session afterwards. A user without two-factor has no
// browsers to forget.
func (s *Service) ForgetDevices(ctx context.Context, userID string) error {
	if _, err := s.Store.ForgetDevices(ctx, userID, random.Base64URL(16)); err != nil {
		return fmt.Errorf("forget remembered devices: %w", err)
	}
	if err := s.Store.DeleteSecondStepsOf(ctx, userID); err != nil {
		return fmt.Errorf("end pending second steps: %w", err)
	}
	return nil
}
