package oauth

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnverifiedEmailClaim(t *testing.T) {
	cases := map[string]bool{
		`{}`:                         false, // absent: trusted (many enterprise IdPs omit it)
		`{"email_verified":true}`:    false,
		`{"email_verified":"true"}`:  false,
		`{"email_verified":false}`:   true,
		`{"email_verified":"false"}`: true,
		`{"email_verified":0}`:       true,
		`{"email_verified":null}`:    false,
	}
	for raw, want := range cases {
		var c idClaims
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatal(err)
		}
		if got := c.unverified(); got != want {
			t.Errorf("%s: unverified = %v, want %v", raw, got, want)
		}
	}
}

// The OIDC mapping keeps its rule: an address marked email_verified:false is
// dropped, any other (an absent claim included) is verified; trust_email
// keeps the marked one too.
func TestOIDCProfileEmail(t *testing.T) {
	cases := []struct {
		claims   string
		trust    bool
		email    string
		verified bool
	}{
		{`{"email":"A@Corp.example"}`, false, "a@corp.example", true},
		{`{"email":"a@corp.example","email_verified":true}`, false, "a@corp.example", true},
		{`{"email":"a@corp.example","email_verified":"true"}`, false, "a@corp.example", true},
		{`{"email":"a@corp.example","email_verified":false}`, false, "", false},
		{`{"email":"a@corp.example","email_verified":"false"}`, false, "", false},
		{`{"email":"a@corp.example","email_verified":false}`, true, "a@corp.example", true},
		{`{"email":"a@corp.example","email_verified":true}`, true, "a@corp.example", true},
		{`{"email_verified":true}`, false, "", false},
		{`{}`, true, "", false},
	}
	for _, tc := range cases {
		var c idClaims
		require.NoError(t, json.Unmarshal([]byte(tc.claims), &c))
		got := c.profile("sub-1", tc.trust)
		require.Equal(t, "sub-1", got.ID)
		require.Equal(t, tc.email, got.Email, "%s trust=%v", tc.claims, tc.trust)
		require.Equal(t, tc.verified, got.EmailVerified, "%s trust=%v", tc.claims, tc.trust)
	}
}
