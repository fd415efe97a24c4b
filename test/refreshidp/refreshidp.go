// Package refreshidp makes the tests' OpenID Connect server (mockoidc: real
// discovery, signed id_tokens, PKCE, single-use codes) behave like the
// providers whose tokens issue #35 refreshes: short-lived access tokens and
// rotating, single-use refresh tokens. mockoidc's own refresh grant keeps
// the refresh token and answers the same access token within a second, so
// this middleware answers the token endpoint's refresh grant itself and
// rewrites the code grant's answer:
//
//   - every access token is new and opaque, living AccessTTL;
//   - every refresh token is spent by its first use; a second use is
//     answered invalid_grant and revokes the whole grant (RFC 9700 §4.14.2,
//     what Google and Auth0 do), as does Revoke;
//   - every refresh-grant call is counted (Refreshes), the test's proof
//     that latchkey refreshed once.
package refreshidp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// IdP is the refresh behaviour; Middleware goes to mockoidc.AddMiddleware.
type IdP struct {
	mu sync.Mutex
	// accessTTL is the expires_in of the next tokens issued.
	accessTTL time.Duration
	// delay slows each refresh answer, widening the window in which a
	// second refresh would overlap the first.
	delay time.Duration
	// down makes the refresh grant answer 503 (the provider is down),
	// spending nothing.
	down bool
	// refresh are the refresh tokens issued: true while unspent.
	refresh map[string]bool
	// issued are the access tokens issued by refreshes, in order.
	issued    []string
	refreshes atomic.Int64
}

// New is an IdP issuing access tokens that live accessTTL.
func New(accessTTL time.Duration) *IdP {
	return &IdP{accessTTL: accessTTL, refresh: map[string]bool{}}
}

// SetAccessTTL changes the lifetime of the access tokens issued next.
func (p *IdP) SetAccessTTL(d time.Duration) { p.mu.Lock(); p.accessTTL = d; p.mu.Unlock() }

// SetDelay makes every refresh answer wait d.
func (p *IdP) SetDelay(d time.Duration) { p.mu.Lock(); p.delay = d; p.mu.Unlock() }

// SetDown makes the token endpoint's refresh grant fail with 503 (true)
// or work again (false).
func (p *IdP) SetDown(down bool) { p.mu.Lock(); p.down = down; p.mu.Unlock() }

// Refreshes counts the refresh-grant calls to the token endpoint.
func (p *IdP) Refreshes() int64 { return p.refreshes.Load() }

// Issued are the access tokens the refreshes issued, oldest first.
func (p *IdP) Issued() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.issued...)
}

// Secrets are every token this middleware issued (access tokens of
// refreshes, refresh tokens): what must never be found in latchkey's
// database in the clear.
func (p *IdP) Secrets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := append([]string(nil), p.issued...)
	for rt := range p.refresh {
		out = append(out, rt)
	}
	return out
}

// Revoke revokes every refresh token issued (the user revoked the app's
// access at the provider): their next use is invalid_grant.
func (p *IdP) Revoke() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.refresh {
		p.refresh[k] = false
	}
}

// Middleware wraps each of mockoidc's endpoints; it acts on the token
// endpoint only.
func (p *IdP) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/token") {
			next.ServeHTTP(w, r)
			return
		}
		body := new(bytes.Buffer)
		_, _ = body.ReadFrom(r.Body)
		r.Body.Close()
		raw := body.Bytes()
		r.Body = readCloser{bytes.NewReader(raw)}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = readCloser{bytes.NewReader(raw)}
		if r.PostForm.Get("grant_type") == "refresh_token" {
			p.refreshGrant(w, r.PostForm.Get("refresh_token"))
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			copyResponse(w, rec.Code, rec.Header(), rec.Body.Bytes())
			return
		}
		var tok map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// The access token of the code grant stays mockoidc's (its
		// userinfo endpoint checks it); its lifetime and the refresh
		// token are ours.
		p.mu.Lock()
		tok["expires_in"] = int(p.accessTTL / time.Second)
		tok["refresh_token"] = p.newRefresh()
		p.mu.Unlock()
		writeJSON(w, http.StatusOK, tok)
	})
}

// refreshGrant spends rt, once.
func (p *IdP) refreshGrant(w http.ResponseWriter, rt string) {
	p.refreshes.Add(1)
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "temporarily_unavailable"})
		return
	}
	delay := p.delay
	live, known := p.refresh[rt]
	if !live {
		if known { // reuse: the grant is compromised, all of it goes
			for k := range p.refresh {
				p.refresh[k] = false
			}
		}
		p.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "refresh token spent or revoked"})
		return
	}
	p.refresh[rt] = false
	at := "at-" + randomHex()
	p.issued = append(p.issued, at)
	out := map[string]any{
		"access_token": at, "token_type": "Bearer", "expires_in": int(p.accessTTL / time.Second),
		"refresh_token": p.newRefresh(), "scope": "openid email profile",
	}
	p.mu.Unlock()
	time.Sleep(delay)
	writeJSON(w, http.StatusOK, out)
}

// newRefresh issues a refresh token; p.mu is held.
func (p *IdP) newRefresh() string {
	rt := "rt-" + randomHex()
	p.refresh[rt] = true
	return rt
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	copyResponse(w, status, http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}}, b)
}

func copyResponse(w http.ResponseWriter, status int, h http.Header, body []byte) {
	for k, v := range h {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
