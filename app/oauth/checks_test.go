package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

func TestStateIsSHA256OfCSRFTokenProviderAndAttempt(t *testing.T) {
	tok, attempt := strings.Repeat("ab", 32), RandomValue()
	sum := sha256.Sum256([]byte(tok + "|idp|" + attempt))
	if got, want := State(tok, "idp", attempt), base64.RawURLEncoding.EncodeToString(sum[:]); got != want {
		t.Fatalf("State = %s, want %s", got, want)
	}
	if len(State(tok, "idp", attempt)) != 43 {
		t.Fatalf("State is %d characters, want 43", len(State(tok, "idp", attempt)))
	}
	if !StateMatches(tok, "idp", attempt, State(tok, "idp", attempt)) {
		t.Fatal("own state must match")
	}
	own := State(tok, "idp", attempt)
	for _, bad := range []string{"", own[:42], strings.ToUpper(own), State(tok+"x", "idp", attempt),
		State(tok, "other", attempt), State(tok, "idp", RandomValue()), State(tok, "idp", "")} {
		if StateMatches(tok, "idp", attempt, bad) {
			t.Fatalf("state %q must not match", bad)
		}
	}
	if StateMatches("", "idp", attempt, State("", "idp", attempt)) {
		t.Fatal("an empty CSRF token must never match")
	}
	if StateMatches(tok, "idp", "", State(tok, "idp", "")) {
		t.Fatal("an empty attempt must never match")
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
