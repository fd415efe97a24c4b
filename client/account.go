package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Session is one live session of the signed-in user, as latchkey's
// GET {base}/list-sessions lists it (docs/account.md).
type Session struct {
	// ID names the session for POST {base}/revoke-session; never its token.
	ID string `json:"id"`
	// Current: the session of the request the list was asked for.
	Current bool `json:"current"`
	// CreatedAt is the sign-in; LastSeenAt the last extension (it moves
	// at most once per session.update_age).
	CreatedAt  time.Time `json:"createdAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	// Device is a readable summary of the browser ("Firefox 128 on
	// Linux"), Network the client's /24 or /48; "" when unknown.
	Device  string `json:"device"`
	Network string `json:"network"`
}

// LinkedAccount is one OAuth / OIDC identity linked to the signed-in user,
// as latchkey's GET {base}/list-accounts lists it.
type LinkedAccount struct {
	// ID names the identity for POST {base}/unlink-account.
	ID string `json:"id"`
	// Provider is the provider's id, Name its display name.
	Provider string `json:"provider"`
	Name     string `json:"name"`
	// Label is the provider-side e-mail or login; "" when unknown.
	Label     string    `json:"label"`
	CreatedAt time.Time `json:"createdAt"`
}

// ErrSignedOut: the request carries no session latchkey accepts.
var ErrSignedOut = errors.New("client: not signed in")

// maxListAnswer bounds a list's body: a user has a few dozen sessions at most.
const maxListAnswer = 1 << 20

// ListSessions asks latchkey for the live sessions of r's signed-in user,
// forwarding only r's session cookie(s). Without a session (or one latchkey
// refuses) it returns ErrSignedOut. Never cached: each call asks.
func (rm *Remote) ListSessions(ctx context.Context, r *http.Request) ([]Session, error) {
	var out []Session
	if err := rm.list(ctx, r, "/list-sessions", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListAccounts asks latchkey for the OAuth / OIDC identities linked to r's
// signed-in user, oldest first; as ListSessions otherwise.
func (rm *Remote) ListAccounts(ctx context.Context, r *http.Request) ([]LinkedAccount, error) {
	var out []LinkedAccount
	if err := rm.list(ctx, r, "/list-accounts", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// list GETs one of the account API's lists into out.
func (rm *Remote) list(ctx context.Context, r *http.Request, path string, out any) error {
	header := sessionCookieHeader(r, rm.names)
	if header == "" {
		return ErrSignedOut
	}
	ctx, cancel := context.WithTimeout(ctx, rm.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rm.base+path, nil)
	if err != nil {
		return fmt.Errorf("client: %s: %w", path, err)
	}
	req.Header.Set("Cookie", header)
	req.Header.Set("Accept", "application/json")
	res, err := rm.client.Do(req)
	if err != nil {
		return fmt.Errorf("client: %s: %w", path, err)
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return ErrSignedOut
	default:
		return fmt.Errorf("client: %s: latchkey answered %d", path, res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxListAnswer+1))
	if err != nil {
		return fmt.Errorf("client: %s: read answer: %w", path, err)
	}
	if len(body) > maxListAnswer {
		return fmt.Errorf("client: %s: answer too large", path)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("client: %s: answer is not a list", path)
	}
	return nil
}
