package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/latchkey-auth/latchkey/models/scalefill"
)

// oauthProvider is the bench's OpenID Connect provider's id: "github", the
// provider of every filled user's linked account (models/scalefill), so
// the callback signs in an existing linked account on a big table.
const oauthProvider = "github"

// startIdP starts a real OpenID Connect provider (mockoidc) on a loopback
// port; latchkey's generic OIDC provider "github" discovers it.
func startIdP() (*mockoidc.MockOIDC, error) {
	idp, err := mockoidc.NewServer(nil)
	if err != nil {
		return nil, fmt.Errorf("mockoidc: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mockoidc listen: %w", err)
	}
	// mockoidc keeps its sessions in a plain map: its handlers run one at
	// a time, or concurrent sign-ins crash the bench ("concurrent map read
	// and map write" in SessionStore.GetSessionByID).
	var mu sync.Mutex
	if err := idp.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}); err != nil {
		return nil, fmt.Errorf("mockoidc: %w", err)
	}
	if err := idp.Start(ln, nil); err != nil {
		return nil, fmt.Errorf("mockoidc start: %w", err)
	}
	return idp, nil
}

// oauthSignIn is the OAuth round trip: a filled user's identity queued at
// the IdP (subject = its account's provider_account_id), GET csrf, POST
// /signin/github, the IdP's authorization endpoint, GET the callback.
// Clients running at once may take each other's queued identity (the
// queue is one FIFO); every identity is a filled user's, so each round
// trip still signs in an existing account. The one checked round trip
// runs alone.
func oauthSignIn(idp *mockoidc.MockOIDC, users int) signInFlow {
	return func(_ int, b *browser) (string, error) {
		i := rand.IntN(users)
		addr := scalefill.Email(i)
		idp.QueueUser(&mockoidc.MockUser{Subject: fmt.Sprint(i), Email: addr, EmailVerified: true, PreferredUsername: fmt.Sprintf("u%d", i)})
		token, err := b.csrf()
		if err != nil {
			return "", err
		}
		authorize, err := b.post(b.base+"/signin/"+oauthProvider, url.Values{"csrfToken": {token}})
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(authorize, idp.Issuer()) {
			return "", fmt.Errorf("POST /signin/%s: redirected to %s, not the IdP", oauthProvider, authorize)
		}
		callback, _, err := b.get(authorize, http.StatusFound)
		if err != nil {
			return "", err
		}
		return addr, b.finish(callback)
	}
}
