package signin_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// The last-way-in rule: a way counts only when the configuration offers
// it, and an address only once verified.
func TestCanSignIn(t *testing.T) {
	all := signin.WaysOffered{Email: true, Passwords: true, Passkeys: true}
	for _, tc := range []struct {
		name    string
		offered signin.WaysOffered
		ways    models.SignInWays
		can     bool
	}{
		{"nothing", all, models.SignInWays{}, false},
		{"an identity", signin.WaysOffered{}, models.SignInWays{Accounts: 1}, true},
		{"a passkey", all, models.SignInWays{Passkeys: 1}, true},
		{"a passkey, no webauthn provider", signin.WaysOffered{Email: true}, models.SignInWays{Passkeys: 1}, false},
		{"a password", all, models.SignInWays{Password: true}, true},
		{"a password, no credentials provider", signin.WaysOffered{Passkeys: true}, models.SignInWays{Password: true}, false},
		{"a verified address", all, models.SignInWays{Email: "a@example.com", EmailVerified: true}, true},
		{"an unverified address", all, models.SignInWays{Email: "a@example.com"}, false},
		{"a verified address, no e-mail provider", signin.WaysOffered{Passwords: true}, models.SignInWays{Email: "a@example.com", EmailVerified: true}, false},
	} {
		require.Equal(t, tc.can, tc.offered.CanSignIn(tc.ways), tc.name)
	}
}
