package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

func TestStateIsSHA256OfCSRFTokenAndProvider(t *testing.T) {
	tok := strings.Repeat("ab", 32)
	sum := sha256.Sum256([]byte(tok + "|idp"))
	if got, want := State(tok, "idp"), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("State = %s, want %s", got, want)
	}
	if !StateMatches(tok, "idp", State(tok, "idp")) {
		t.Fatal("own state must match")
	}
	for _, bad := range []string{"", State(tok, "idp")[:63], strings.ToUpper(State(tok, "idp")), State(tok+"x", "idp"), State(tok, "other")} {
		if StateMatches(tok, "idp", bad) {
			t.Fatalf("state %q must not match", bad)
		}
	}
	if StateMatches("", "idp", State("", "idp")) {
		t.Fatal("an empty CSRF token must never match")
	}
}

func TestRandomValueIsUnique(t *testing.T) {
	a, b := RandomValue(), RandomValue()
	if len(a) != 43 || a == b {
		t.Fatalf("RandomValue: %q %q", a, b)
	}
}

// Caller parameters cannot replace the checks or the client binding.
func TestAuthOptionsKeepReservedParameters(t *testing.T) {
	conf := &oauth2.Config{ClientID: "cid", RedirectURL: "https://rp/cb", Endpoint: oauth2.Endpoint{AuthURL: "https://idp/auth"}}
	params := url.Values{"state": {"evil"}, "nonce": {"evil"}, "code_challenge": {"evil"}, "client_id": {"evil"},
		"redirect_uri": {"https://evil"}, "response_type": {"token"}, "prompt": {"login"}}
	u, err := url.Parse(conf.AuthCodeURL("good-state", authOptions(params, "verifier", "good-nonce")...))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	want := map[string]string{"state": "good-state", "nonce": "good-nonce", "client_id": "cid",
		"redirect_uri": "https://rp/cb", "response_type": "code", "prompt": "login",
		"code_challenge": oauth2.S256ChallengeFromVerifier("verifier"), "code_challenge_method": "S256"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
}
