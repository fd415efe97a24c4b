package main

import (
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The OpenID Provider's endpoints a relying party or a resource server
// calls again and again: the token endpoint (refresh_token grant),
// userinfo and introspection. They are served by an instance of their own
// (database strategy, the provider on, one first-party confidential client
// with refresh tokens), so the other targets' processes are the same as
// without the provider.

const (
	oidcClient   = "bench"
	oidcSecret   = "bench-client-secret-0123456789abcdef0123456789"
	oidcRedirect = "http://127.0.0.1:9/callback" // never contacted: the flow stops at the redirect
)

// oidcYAML is the instance's oidc: section; alg signs the ID tokens.
func oidcYAML(alg string) string {
	return fmt.Sprintf(`oidc:
  enabled: true
  signing_algorithm: %s
  clients:
    - id: %s
      name: Bench
      secret: %s
      redirect_uris: [%q]
      first_party: true
      refresh_tokens: true
`, alg, oidcClient, oidcSecret, oidcRedirect)
}

//go:embed refresh.lua
var refreshScript string

// startOpenID starts latchkey with the provider on, its ID tokens signed
// with alg (database strategy; dbURL "" means SQLite).
func startOpenID(bin, dir, name, dbURL, alg string) (*proc, error) {
	return startLatchkeyWith(bin, dir, name, "database", dbURL, oidcYAML(alg))
}

// relyingParty is the client "bench" with a browser signed in to
// latchkey: it gets tokens through the whole code flow.
type relyingParty struct {
	p       *proc
	browser *client
	addr    string
}

// tokens are a token endpoint's answer.
type tokens struct {
	Access  string `json:"access_token"`
	Refresh string `json:"refresh_token"`
	ID      string `json:"id_token"`
}

func (t tokens) complete() error {
	if t.Access == "" || t.Refresh == "" || t.ID == "" {
		return fmt.Errorf("want access, refresh and ID tokens, got %+v", t)
	}
	return nil
}

// basicAuth is the client's Authorization header (client_secret_basic).
func basicAuth() string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(oidcClient)+":"+url.QueryEscape(oidcSecret)))
}

// issue runs one code flow: authorize (PKCE, state, nonce), latchkey's
// redirects followed (the browser is signed in and the client first-party,
// so no page stops it), the code exchanged. Each call starts a new token
// family.
func (rp *relyingParty) issue() (tokens, error) {
	verifier, state, nonce := randomString(), randomString(), randomString()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"client_id": {oidcClient}, "response_type": {"code"}, "scope": {"openid profile email"},
		"redirect_uri": {oidcRedirect}, "state": {state}, "nonce": {nonce},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	next := rp.p.Origin + basePath + "/oidc/authorize?" + q.Encode()
	for i := 0; strings.HasPrefix(next, rp.p.Origin) && i < 10; i++ {
		req, _ := http.NewRequest(http.MethodGet, next, nil)
		res, _, err := rp.browser.do(req, http.StatusFound)
		if err != nil {
			return tokens{}, fmt.Errorf("authorize: %w", err)
		}
		loc, err := res.Location()
		if err != nil {
			return tokens{}, fmt.Errorf("authorize: %w", err)
		}
		next = loc.String()
	}
	u, err := url.Parse(next)
	if err != nil || !strings.HasPrefix(next, oidcRedirect+"?") || u.Query().Get("state") != state || u.Query().Get("code") == "" {
		return tokens{}, fmt.Errorf("authorize ended at %q, not the client's redirect with a code", next)
	}
	t, err := rp.token(url.Values{"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")},
		"redirect_uri": {oidcRedirect}, "code_verifier": {verifier}})
	if err != nil {
		return t, fmt.Errorf("code exchange: %w", err)
	}
	return t, t.complete()
}

// token posts form to the token endpoint as the client.
func (rp *relyingParty) token(form url.Values) (tokens, error) {
	req, _ := http.NewRequest(http.MethodPost, rp.p.Origin+basePath+"/oidc/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", basicAuth())
	_, body, err := rp.browser.do(req, http.StatusOK)
	if err != nil {
		return tokens{}, err
	}
	var t tokens
	if err := json.Unmarshal(body, &t); err != nil {
		return t, fmt.Errorf("token answer %q: %w", body, err)
	}
	return t, nil
}

// writeRefreshTokens starts n families and writes their refresh tokens,
// one a line, to path: a wrk run's supply (refresh.lua).
func (rp *relyingParty) writeRefreshTokens(path string, n int) error {
	var b strings.Builder
	for range n {
		t, err := rp.issue()
		if err != nil {
			return err
		}
		b.WriteString(t.Refresh + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// openIDTargets signs a browser in on p, gets tokens, and lists the three
// targets, keyed key-token, key-userinfo, key-introspect; label names the
// instance. The access token userinfo and introspection are sent is one,
// valid for the whole run (access_token_lifetime, an hour); the token
// endpoint rotates a fresh supply of refresh tokens in each wrk run.
func openIDTargets(p *proc, dir, key, label, alg string, l load) ([]*target, error) {
	const addr = "bench-oidc@example.com"
	browser, err := signInClient(p, addr)
	if err != nil {
		return nil, fmt.Errorf("sign in (%s): %w", p.Name, err)
	}
	rp := &relyingParty{p: p, browser: browser, addr: addr}
	held, err := rp.issue()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	script := filepath.Join(dir, "refresh.lua")
	if err := os.WriteFile(script, []byte(refreshScript), 0o600); err != nil {
		return nil, err
	}
	supply := filepath.Join(dir, key+"-refresh-tokens")
	// Each thread's pool must cover its connections; a few more to spare.
	perThread := (l.Conns+l.Threads-1)/l.Threads + 4
	introspect := filepath.Join(dir, key+"-introspect.lua")
	if err := os.WriteFile(introspect, []byte(postScript("token="+url.QueryEscape(held.Access))), 0o600); err != nil {
		return nil, err
	}
	auth := "Authorization: " + basicAuth()
	bearer := "Authorization: Bearer " + held.Access
	return []*target{
		{
			Key: key + "-token", Name: "`POST /oidc/token` refresh_token grant (rotation, a new ID token signed " + alg + "), " + label,
			URL: p.Origin + basePath + "/oidc/token", Proc: p, Headers: []string{auth},
			Script: script, ScriptArgs: []string{supply, strconv.Itoa(l.Threads)},
			prepare: func() error { return rp.writeRefreshTokens(supply, perThread*l.Threads) },
			request: func() (*http.Request, error) {
				t, err := rp.issue()
				if err != nil {
					return nil, err
				}
				form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.Refresh}}
				req, err := http.NewRequest(http.MethodPost, p.Origin+basePath+"/oidc/token", strings.NewReader(form.Encode()))
				if err != nil {
					return nil, err
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Authorization", basicAuth())
				return req, nil
			},
			check: func(body []byte) error {
				var t tokens
				if err := json.Unmarshal(body, &t); err != nil {
					return fmt.Errorf("not a token answer: %q", body)
				}
				return t.complete()
			},
		},
		{
			Key: key + "-userinfo", Name: "`GET /oidc/userinfo` with a bearer access token, " + label,
			URL: p.Origin + basePath + "/oidc/userinfo", Proc: p, Headers: []string{bearer},
			check: jsonField("email", addr),
		},
		{
			Key: key + "-introspect", Name: "`POST /oidc/introspect` of an access token (client_secret_basic), " + label,
			URL: p.Origin + basePath + "/oidc/introspect", Proc: p, Headers: []string{auth}, Script: introspect,
			request: func() (*http.Request, error) {
				req, err := http.NewRequest(http.MethodPost, p.Origin+basePath+"/oidc/introspect", strings.NewReader("token="+url.QueryEscape(held.Access)))
				if err != nil {
					return nil, err
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Authorization", basicAuth())
				return req, nil
			},
			check: func(body []byte) error {
				var v struct {
					Active bool   `json:"active"`
					Email  string `json:"email"`
				}
				if err := json.Unmarshal(body, &v); err != nil || !v.Active || v.Email != addr {
					return fmt.Errorf("want an active token of %s, got %s", addr, body)
				}
				return nil
			},
		},
	}, nil
}

// postScript is a wrk script that POSTs body (a form) on every request.
func postScript(body string) string {
	if strings.Contains(body, "]==]") {
		panic("postScript: body closes the Lua string")
	}
	return `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = [==[` + body + `]==]
`
}

// jsonField accepts a JSON object whose field name is want.
func jsonField(name, want string) func([]byte) error {
	return func(body []byte) error {
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("not a JSON object: %q", body)
		}
		if got, _ := v[name].(string); got != want {
			return fmt.Errorf("want %s %q, got %s", name, want, body)
		}
		return nil
	}
}
