package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// AccessToken is the signed-in user's access token at a provider, as
// latchkey's GET {base}/token/:provider answers it (docs/provider-tokens.md).
type AccessToken struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	// ExpiresAt is when the token expires; zero when the provider gave no
	// expiry. latchkey refreshed it first if it was about to.
	ExpiresAt time.Time `json:"-"`
	Scope     string    `json:"scope"`
}

// The answers of GET /token/:provider that are no token.
var (
	// ErrSignInAgain: the provider refused the refresh token (revoked,
	// expired): send the user to sign in with the provider again. GET
	// /session carries "error": "RefreshAccessTokenError" meanwhile.
	ErrSignInAgain = errors.New("client: RefreshAccessTokenError: the user must sign in with the provider again")
	// ErrTokensNotStored: the provider does not keep tokens (store_tokens
	// off), or none is kept for the user.
	ErrTokensNotStored = errors.New("client: TokensNotStored: latchkey keeps no token of the user at this provider")
)

// defaultTokenTimeout bounds AccessToken: latchkey may refresh the token
// first, or wait for another instance's refresh (tokens.refresh_wait).
const defaultTokenTimeout = 20 * time.Second

// AccessToken asks latchkey for r's signed-in user's access token at
// provider (GET {base}/token/:provider), forwarding only r's session
// cookie(s) and RemoteOptions.TokenSecret (tokens.client_secret) as the
// bearer token. It returns ErrSignedOut, ErrSignInAgain or
// ErrTokensNotStored for those answers. Never cached: latchkey answers
// from its database and refreshes once for all callers.
func (rm *Remote) AccessToken(ctx context.Context, r *http.Request, provider string) (*AccessToken, error) {
	header := sessionCookieHeader(r, rm.names)
	if header == "" {
		return nil, ErrSignedOut
	}
	ctx, cancel := context.WithTimeout(ctx, rm.tokenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rm.base+"/token/"+url.PathEscape(provider), nil)
	if err != nil {
		return nil, fmt.Errorf("client: token: %w", err)
	}
	req.Header.Set("Cookie", header)
	req.Header.Set("Accept", "application/json")
	if rm.tokenSecret != "" {
		req.Header.Set("Authorization", "Bearer "+rm.tokenSecret)
	}
	res, err := rm.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: token: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("client: token: read answer: %w", err)
	}
	if len(body) > maxAnswer {
		return nil, errors.New("client: token: answer too large")
	}
	var out struct {
		AccessToken
		ExpiresAt *int64 `json:"expires_at"`
		Error     string `json:"error"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("client: token: latchkey answered %d, not JSON", res.StatusCode)
	}
	switch {
	case res.StatusCode == http.StatusOK && out.AccessToken.AccessToken != "":
		t := out.AccessToken
		if out.ExpiresAt != nil {
			t.ExpiresAt = time.Unix(*out.ExpiresAt, 0)
		}
		return &t, nil
	case out.Error == "RefreshAccessTokenError":
		return nil, ErrSignInAgain
	case out.Error == "SessionRequired":
		return nil, ErrSignedOut
	case out.Error == "TokensNotStored":
		return nil, ErrTokensNotStored
	}
	return nil, fmt.Errorf("client: token: latchkey answered %d %s", res.StatusCode, out.Error)
}
