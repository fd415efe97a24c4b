package oauth

import (
	"encoding/json"
	"testing"
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
