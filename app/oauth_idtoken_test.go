package app_test

// Forged and altered id_tokens through a real sign-in: a middleware on
// mockoidc's token endpoint (tokenTap) counts the token requests and can
// rewrite the id_token of a successful response, re-signing it with the
// IdP's own key (so only the altered claim is wrong) or with a foreign one.

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// tokenTap wraps mockoidc's token endpoint.
type tokenTap struct {
	t testing.TB

	mu       sync.Mutex
	statuses []int                  // status of every token response, in order
	claims   func(c map[string]any) // rewrites the id_token's claims; nil: passed through
	key      *rsa.PrivateKey        // signs a rewritten id_token
	kid      string                 // its header's kid
}

func (tp *tokenTap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != mockoidc.TokenEndpoint {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		tp.mu.Lock()
		tp.statuses = append(tp.statuses, rec.Code)
		rewrite, key, kid := tp.claims, tp.key, tp.kid
		tp.mu.Unlock()
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK && rewrite != nil {
			body = tp.rewrite(body, rewrite, key, kid)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// rewrite replaces the id_token in a token response by one with the claims
// changed by rewrite and signed (RS256) by key. Failures are reported with
// Errorf: this runs on the IdP's goroutine.
func (tp *tokenTap) rewrite(body []byte, rewrite func(map[string]any), key *rsa.PrivateKey, kid string) []byte {
	var res map[string]any
	if err := json.Unmarshal(body, &res); err != nil {
		tp.t.Errorf("token response: %v", err)
		return body
	}
	raw, _ := res["id_token"].(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		tp.t.Errorf("token response has no JWS id_token: %q", raw)
		return body
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		tp.t.Errorf("id_token payload: %v", err)
		return body
	}
	claims := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		tp.t.Errorf("id_token claims: %v", err)
		return body
	}
	rewrite(claims)
	res["id_token"] = signRS256(tp.t, key, kid, claims)
	out, err := json.Marshal(res)
	if err != nil {
		tp.t.Errorf("token response: %v", err)
		return body
	}
	return out
}

// signRS256 is a compact JWS of claims, written out by hand.
func signRS256(t testing.TB, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Errorf("marshal: %v", err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(map[string]any{"alg": "RS256", "typ": "JWT", "kid": kid}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Errorf("sign: %v", err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// set installs a claims rewrite signed with key (nil: the IdP's own key).
func (tp *tokenTap) set(e *env, key *rsa.PrivateKey, rewrite func(map[string]any)) {
	tp.t.Helper()
	kid, err := e.idp.Keypair.KeyID() // the IdP's kid, even for a foreign key
	require.NoError(tp.t, err)
	if key == nil {
		key = e.idp.Keypair.PrivateKey
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.claims, tp.key, tp.kid = rewrite, key, kid
}

// requests is how many token requests reached the IdP. (golang.org/x/oauth2
// may send two per exchange: it retries with the client credentials in the
// form after mockoidc refuses them in a Basic header.)
func (tp *tokenTap) requests() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return len(tp.statuses)
}

// issued is how many token requests the IdP answered with tokens (200).
func (tp *tokenTap) issued() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	n := 0
	for _, st := range tp.statuses {
		if st == http.StatusOK {
			n++
		}
	}
	return n
}

// startTapped is startOIDC with a tokenTap on the IdP; o's idp, ownURL and
// idpWrap are set here.
func startTapped(t *testing.T, o envOpts) (*env, *tokenTap) {
	t.Helper()
	tap := &tokenTap{t: t}
	o.ownURL, o.idp, o.idpWrap = true, true, tap.wrap
	return startEnv(t, o), tap
}

// Each id_token below is refused by latchkey after a successful token
// response: OAuthCallback, no user, account or session. A control run
// (claims rewritten but still valid) shows the rewriting itself is sound.
func TestOAuthForgedIDToken(t *testing.T) {
	foreign, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	cases := []struct {
		name    string
		foreign bool
		claims  func(e *env, c map[string]any)
	}{
		{"signed with a foreign key", true, func(*env, map[string]any) {}},
		{"wrong aud", false, func(_ *env, c map[string]any) { c["aud"] = []string{"someone-else"} }},
		{"wrong iss", false, func(_ *env, c map[string]any) { c["iss"] = "https://evil.example/oidc" }},
		{"expired", false, func(_ *env, c map[string]any) {
			now := time.Now()
			c["iat"] = now.Add(-2 * time.Hour).Unix()
			c["nbf"] = now.Add(-2 * time.Hour).Unix()
			c["exp"] = now.Add(-time.Hour).Unix()
		}},
		{"wrong nonce", false, func(_ *env, c map[string]any) { c["nonce"] = "forged-nonce-value" }},
		// OIDC Core 3.1.3.7 and openid-client: a token for several
		// audiences names the party it was issued to, and that is us.
		{"several audiences, azp another client", false, func(e *env, c map[string]any) {
			c["aud"], c["azp"] = []string{e.idp.Config().ClientID, "other-client"}, "other-client"
		}},
		{"several audiences, no azp", false, func(e *env, c map[string]any) {
			c["aud"] = []string{e.idp.Config().ClientID, "other-client"}
			delete(c, "azp")
		}},
		{"azp another client", false, func(_ *env, c map[string]any) { c["azp"] = "other-client" }},
	}
	// The refusals share one instance, each case in a fresh browser: as
	// every one of them must create nothing, the database stays empty for
	// the next.
	shared, tap := startTapped(t, envOpts{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := shared.in(t)
			e.client = e.following(e.browser())
			var key *rsa.PrivateKey
			if tc.foreign {
				key = foreign
			}
			tap.set(e, key, func(c map[string]any) { tc.claims(e, c) })
			issued := tap.issued()
			s := steps{e, e.client}
			e.requireError(s.get(s.toCallback(s.toIdP()).String()), "OAuthCallback")
			require.Equal(t, issued+1, tap.issued(), "the IdP issued tokens; latchkey refused the id_token")
			requireNothingCreated(t, e)
			require.Equal(t, map[string]any{}, e.session(e.client))
		})
	}
	t.Run("control: several audiences, azp ours", func(t *testing.T) {
		e, tap := startTapped(t, envOpts{})
		tap.set(e, nil, func(c map[string]any) {
			c["aud"], c["azp"] = []string{e.idp.Config().ClientID, "other-client"}, e.idp.Config().ClientID
		})
		s := steps{e, e.client}
		require.Equal(t, e.origin+"/home", s.get(s.toCallback(s.toIdP()).String()).location())
	})
	t.Run("control: re-signed with the IdP's key, claims intact", func(t *testing.T) {
		e, tap := startTapped(t, envOpts{})
		tap.set(e, nil, func(c map[string]any) { c["name"] = "Re Signed" })
		s := steps{e, e.client}
		require.Equal(t, e.origin+"/home", s.get(s.toCallback(s.toIdP()).String()).location())
		u, _ := e.session(e.client)["user"].(map[string]any)
		require.Equal(t, "Re Signed", u["name"])
	})
}

// An IdP that says email_verified: false does not vouch for the address:
// the user gets no e-mail, and allowed_email_domains cannot be passed with it.
func TestOAuthUnverifiedEmail(t *testing.T) {
	unverified := func(c map[string]any) { c["email_verified"] = false }
	t.Run("the user has no e-mail", func(t *testing.T) {
		e, tap := startTapped(t, envOpts{})
		tap.set(e, nil, unverified)
		e.idp.QueueUser(&mockoidc.MockUser{Subject: "s-unv", Email: "ceo@corp.example", EmailVerified: true})
		require.Equal(t, e.origin+"/home", e.signIn(e.client, "idp", "/home").location())
		u := e.onlyUser()
		require.Nil(t, u.Email)
		require.Empty(t, userEmail(e.session(e.client)))
		require.EqualValues(t, 1, e.counts().Accounts)
	})
	t.Run("allowed_email_domains: AccessDenied", func(t *testing.T) {
		e, tap := startTapped(t, envOpts{config: func(c *config.Config) {
			c.Callbacks.AllowedEmailDomains = []string{"corp.example"}
		}})
		tap.set(e, nil, unverified)
		e.idp.QueueUser(&mockoidc.MockUser{Subject: "s-unv", Email: "ceo@corp.example", EmailVerified: true})
		requireChainEndsWith(t, e, e.client, "idp", "AccessDenied")
		requireNothingCreated(t, e)
	})
	t.Run("control: verified, the same address passes", func(t *testing.T) {
		e, tap := startTapped(t, envOpts{config: func(c *config.Config) {
			c.Callbacks.AllowedEmailDomains = []string{"corp.example"}
		}})
		tap.set(e, nil, func(c map[string]any) { c["email_verified"] = true })
		e.idp.QueueUser(&mockoidc.MockUser{Subject: "s-ver", Email: "ceo@corp.example", EmailVerified: true})
		require.Equal(t, e.origin+"/home", e.signIn(e.client, "idp", "/home").location())
		require.Equal(t, "ceo@corp.example", userEmail(e.session(e.client)))
	})
}
