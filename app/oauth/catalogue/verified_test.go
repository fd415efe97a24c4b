package catalogue

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

// profileFrom builds provider id against a local IdP that answers every
// request whose path ends in a key of bodies with that JSON (404 otherwise),
// and maps the profile for tok.
func profileFrom(t *testing.T, id string, tok *oauth2.Token, bodies map[string]string) (Profile, error) {
	t.Helper()
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		for suffix, body := range bodies {
			if strings.HasSuffix(r.URL.Path, suffix) {
				writeJSON(w, body)
				return
			}
		}
		http.NotFound(w, r)
	})
	return buildWith(t, id, hc).Profile(t.Context(), tok)
}

// idToken is an unsigned JWT carrying claims, as a token response would hold it.
func idToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	require.NoError(t, err)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc(b) + "." + enc([]byte("signature"))
}

func TestVerifiedGitHub(t *testing.T) {
	const private = `{"id": 42, "login": "octocat", "email": null}`
	const public = `{"id": 42, "login": "octocat", "email": "Octo@Example.com"}`
	cases := []struct {
		name         string
		user, emails string // emails "" answers /user/emails with 404 (no user:email scope)
		email        string
		verified     bool
		emailCalls   int32
	}{
		{"private, goth picks the verified primary", private,
			`[{"email": "typo@example.com", "primary": false, "verified": false},
			  {"email": "octo@example.com", "primary": true, "verified": true}]`,
			"octo@example.com", true, 1},
		{"public and verified", public,
			`[{"email": "octo@example.com", "primary": false, "verified": true}]`,
			"octo@example.com", true, 1},
		{"public but unverified", public,
			`[{"email": "other@example.com", "primary": true, "verified": true},
			  {"email": "octo@example.com", "primary": false, "verified": false}]`,
			"octo@example.com", false, 1},
		{"public and not listed", public,
			`[{"email": "other@example.com", "primary": true, "verified": true}]`,
			"octo@example.com", false, 1},
		{"public without the user:email scope", public, "", "octo@example.com", false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var emailCalls atomic.Int32
			hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, "Bearer gho_test", r.Header.Get("Authorization"))
				switch r.Host + r.URL.Path {
				case "api.github.com/user":
					writeJSON(w, tc.user)
				case "api.github.com/user/emails":
					emailCalls.Add(1)
					if tc.emails == "" {
						http.NotFound(w, r)
						return
					}
					writeJSON(w, tc.emails)
				default:
					http.NotFound(w, r)
				}
			})
			got, err := buildWith(t, "github", hc).Profile(t.Context(), &oauth2.Token{AccessToken: "gho_test"})
			require.NoError(t, err)
			require.Equal(t, tc.email, got.Email)
			require.Equal(t, tc.verified, got.EmailVerified)
			require.Equal(t, tc.emailCalls, emailCalls.Load(), "/user/emails calls")
		})
	}
	// goth refuses a private address that is not a verified primary: no
	// profile at all, so nothing unverified gets through this way.
	_, err := profileFrom(t, "github", &oauth2.Token{AccessToken: "x"}, map[string]string{
		"/user":        private,
		"/user/emails": `[{"email": "octo@example.com", "primary": true, "verified": false}]`,
	})
	require.ErrorContains(t, err, "verified, primary email")
}

func TestVerifiedGoogle(t *testing.T) {
	for body, want := range map[string]bool{
		`{"id": "1", "email": "A@Gmail.com", "verified_email": true}`:  true,
		`{"id": "1", "email": "a@gmail.com", "verified_email": false}`: false,
		`{"id": "1", "email": "a@gmail.com", "email_verified": true}`:  true,
		`{"id": "1", "email": "a@gmail.com", "email_verified": false}`: false,
		`{"id": "1", "email": "a@gmail.com"}`:                          false,
	} {
		got, err := profileFrom(t, "google", &oauth2.Token{AccessToken: "x"}, map[string]string{"/oauth2/v2/userinfo": body})
		require.NoError(t, err, body)
		require.Equal(t, "a@gmail.com", got.Email, body)
		require.Equal(t, want, got.EmailVerified, body)
	}
}

func TestVerifiedDiscord(t *testing.T) {
	for body, want := range map[string]bool{
		`{"id": "8", "username": "n", "email": "n@example.com", "verified": true}`:  true,
		`{"id": "8", "username": "n", "email": "n@example.com", "verified": false}`: false,
		`{"id": "8", "username": "n", "email": "n@example.com"}`:                    false,
	} {
		got, err := profileFrom(t, "discord", &oauth2.Token{AccessToken: "x"}, map[string]string{"/users/@me": body})
		require.NoError(t, err, body)
		require.Equal(t, "n@example.com", got.Email, body)
		require.Equal(t, want, got.EmailVerified, body)
	}
}

// Graph's mail is whatever a tenant admin typed in: only the id_token's
// xms_edov claim for the same address makes it verified.
func TestVerifiedMicrosoft(t *testing.T) {
	const graph = `{"id": "oid-1", "displayName": "CEO", "mail": "CEO@Corp.example", "userPrincipalName": "mallory@evil.onmicrosoft.com"}`
	cases := []struct {
		name   string
		claims map[string]any // nil: no id_token in the token response
		want   bool
	}{
		{"mail without id_token", nil, false},
		{"mail without xms_edov", map[string]any{"email": "ceo@corp.example"}, false},
		{"xms_edov false", map[string]any{"email": "ceo@corp.example", "xms_edov": false}, false},
		{"xms_edov for another address", map[string]any{"email": "someone@corp.example", "xms_edov": true}, false},
		{"xms_edov without email", map[string]any{"xms_edov": true}, false},
		{"xms_edov true", map[string]any{"email": "ceo@corp.example", "xms_edov": true}, true},
		{"xms_edov as a string", map[string]any{"email": "CEO@corp.example", "xms_edov": "1"}, true},
	}
	for _, id := range []string{"microsoftonline", "azureadv2"} {
		for _, tc := range cases {
			t.Run(id+"/"+tc.name, func(t *testing.T) {
				tok := &oauth2.Token{AccessToken: "x"}
				if tc.claims != nil {
					tok = tok.WithExtra(map[string]any{"id_token": idToken(t, tc.claims)})
				}
				got, err := profileFrom(t, id, tok, map[string]string{"/v1.0/me": graph})
				require.NoError(t, err)
				require.Equal(t, "ceo@corp.example", got.Email)
				require.Equal(t, tc.want, got.EmailVerified)
			})
		}
	}
	// microsoftonline falls back to the userPrincipalName, which xms_edov
	// for the mail claim does not cover.
	tok := (&oauth2.Token{AccessToken: "x"}).WithExtra(map[string]any{
		"id_token": idToken(t, map[string]any{"email": "ceo@corp.example", "xms_edov": true}),
	})
	got, err := profileFrom(t, "microsoftonline", tok, map[string]string{
		"/v1.0/me": `{"id": "oid-1", "userPrincipalName": "CEO@corp.example.onmicrosoft.com"}`,
	})
	require.NoError(t, err)
	require.Equal(t, "ceo@corp.example.onmicrosoft.com", got.Email)
	require.False(t, got.EmailVerified)
}

// The other providers that say whether the address is verified.
func TestVerifiedFlags(t *testing.T) {
	cases := []struct {
		id         string
		path       string
		yes, no    string
		extraPaths map[string]string
	}{
		{id: "auth0", path: "/userinfo",
			yes: `{"sub": "auth0|1", "email": "a@example.com", "email_verified": true}`,
			no:  `{"sub": "auth0|1", "email": "a@example.com", "email_verified": false}`},
		{id: "cloudfoundry", path: "/userinfo",
			yes: `{"user_id": "u1", "email": "a@example.com", "email_verified": true}`,
			no:  `{"user_id": "u1", "email": "a@example.com", "email_verified": false}`},
		{id: "cognito", path: "/oauth2/userInfo",
			yes: `{"sub": "s1", "email": "a@example.com", "email_verified": "true"}`,
			no:  `{"sub": "s1", "email": "a@example.com", "email_verified": "false"}`},
		{id: "digitalocean", path: "/v2/account",
			yes: `{"account": {"uuid": "d1", "email": "a@example.com", "email_verified": true}}`,
			no:  `{"account": {"uuid": "d1", "email": "a@example.com", "email_verified": false}}`},
		{id: "dropbox", path: "/2/users/get_current_account",
			yes: `{"account_id": "dbid:1", "email": "a@example.com", "email_verified": true}`,
			no:  `{"account_id": "dbid:1", "email": "a@example.com", "email_verified": false}`},
	}
	for _, tc := range cases {
		for body, want := range map[string]bool{tc.yes: true, tc.no: false} {
			got, err := profileFrom(t, tc.id, &oauth2.Token{AccessToken: "x"}, map[string]string{tc.path: body})
			require.NoError(t, err, "%s: %s", tc.id, body)
			require.Equal(t, "a@example.com", got.Email, "%s: %s", tc.id, body)
			require.Equal(t, want, got.EmailVerified, "%s: %s", tc.id, body)
		}
	}
}

// goth's bitbucket returns only a primary, confirmed address, or fails.
func TestVerifiedBitbucket(t *testing.T) {
	user := `{"uuid": "{b1}", "username": "bb", "display_name": "B B"}`
	got, err := profileFrom(t, "bitbucket", &oauth2.Token{AccessToken: "x"}, map[string]string{
		"/2.0/user": user,
		"/2.0/user/emails": `{"values": [{"email": "typo@example.com", "is_primary": false, "is_confirmed": false},
			{"email": "B@Example.com", "is_primary": true, "is_confirmed": true}]}`,
	})
	require.NoError(t, err)
	require.Equal(t, "b@example.com", got.Email)
	require.True(t, got.EmailVerified)
	_, err = profileFrom(t, "bitbucket", &oauth2.Token{AccessToken: "x"}, map[string]string{
		"/2.0/user":        user,
		"/2.0/user/emails": `{"values": [{"email": "b@example.com", "is_primary": true, "is_confirmed": false}]}`,
	})
	require.ErrorContains(t, err, "confirmed, primary email")
}

// Nextcloud returns the address its user typed into their settings.
func TestUnverifiedNextcloud(t *testing.T) {
	got, err := profileFrom(t, "nextcloud", &oauth2.Token{AccessToken: "x"}, map[string]string{
		"/ocs/v2.php/cloud/user": `{"ocs": {"data": {"id": "admin", "display-name": "Admin", "email": "CEO@Corp.example"}}}`,
	})
	require.NoError(t, err)
	require.Equal(t, "ceo@corp.example", got.Email)
	require.False(t, got.EmailVerified)
}

// A provider without a mapping is unverified, whatever its JSON claims.
func TestUnverifiedWithoutMapping(t *testing.T) {
	require.False(t, VerifiesEmail("gitlab"))
	got, err := profileFrom(t, "gitlab", &oauth2.Token{AccessToken: "x"}, map[string]string{
		"/api/v4/user": `{"id": 7, "username": "gl", "email": "gl@example.com",
			"confirmed_at": "2015-09-03T07:24:01.670Z", "email_verified": true, "verified": true}`,
	})
	require.NoError(t, err)
	require.Equal(t, "gl@example.com", got.Email)
	require.False(t, got.EmailVerified)
}

func TestVerifiesEmail(t *testing.T) {
	require.Equal(t, []string{
		"auth0", "azureadv2", "bitbucket", "cloudfoundry", "cognito", "digitalocean",
		"discord", "dropbox", "github", "google", "microsoftonline",
	}, VerifyingIDs())
	for _, id := range VerifyingIDs() {
		_, ok := Lookup(id)
		require.True(t, ok, "%s is not a catalogue id", id)
		require.True(t, VerifiesEmail(id))
	}
	require.False(t, VerifiesEmail("nextcloud"))
	require.False(t, VerifiesEmail("no-such-provider"))

	// config.yaml lists them for operators.
	b, err := os.ReadFile("../../../config.yaml")
	require.NoError(t, err)
	_, doc, ok := strings.Cut(string(b), "counts as verified only where the provider says so")
	require.True(t, ok, "config.yaml no longer explains trust_email")
	doc, _, _ = strings.Cut(doc, "Every other catalogue e-mail")
	for _, id := range VerifyingIDs() {
		require.Contains(t, doc, id, "config.yaml's list of verifying providers")
	}
}

// trust_email marks every address of the provider verified, with no extra
// request, but still none when there is no address.
func TestTrustEmail(t *testing.T) {
	var emailCalls atomic.Int32
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/user/emails":
			emailCalls.Add(1)
			writeJSON(w, `[]`)
		case r.URL.Path == "/user":
			writeJSON(w, `{"id": 42, "login": "octocat", "email": "Octo@Example.com"}`)
		case strings.HasPrefix(r.URL.Path, "/ocs/"):
			writeJSON(w, `{"ocs": {"data": {"id": "admin", "email": "CEO@Corp.example"}}}`)
		default:
			writeJSON(w, `{"id": "8", "username": "no-email"}`) // discord
		}
	})
	profile := func(id string, trust bool) Profile {
		cfg := fakeConfig(id)
		cfg.HTTPClient, cfg.TrustEmail = hc, trust
		p, err := Build(cfg)
		require.NoError(t, err)
		got, err := p.Profile(t.Context(), &oauth2.Token{AccessToken: "x"})
		require.NoError(t, err)
		return got
	}
	for _, id := range []string{"nextcloud", "github"} {
		require.False(t, profile(id, false).EmailVerified, id)
		got := profile(id, true)
		require.NotEmpty(t, got.Email, id)
		require.True(t, got.EmailVerified, id)
	}
	require.Equal(t, int32(1), emailCalls.Load(), "only the untrusted GitHub sign-in looks up /user/emails")
	got := profile("discord", true)
	require.Empty(t, got.Email)
	require.False(t, got.EmailVerified)
}
