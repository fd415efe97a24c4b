// Package oauth runs latchkey's OAuth 2 / OpenID Connect flows itself —
// state, PKCE and nonce included — using goth only as a catalogue of
// endpoints and profile mappings and go-oidc to verify id_tokens. gothic is
// not used: its state check fails open.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Profile is the user as the provider describes them.
type Profile struct {
	ID    string
	Name  string
	Email string
	Image string
	// EmailVerified says the provider vouches that the user controls Email
	// (always false when Email is empty). An unverified address is still the
	// user's own description of themselves, but it must not be trusted as
	// proof of ownership: anyone can type "ceo@corp.example" into a profile.
	EmailVerified bool
}

// Result is what a successful code exchange yields.
type Result struct {
	Profile Profile
	Token   *oauth2.Token
	IDToken string
}

// Client is one configured OAuth provider.
type Client interface {
	// UsesPKCE and UsesNonce say which checks this provider gets.
	UsesPKCE() bool
	UsesNonce() bool
	// AuthURL builds the authorization request.
	AuthURL(ctx context.Context, state, verifier, nonce string, params url.Values) (string, error)
	// CheckIssuer is RFC 9207's mix-up defence, before the code is
	// redeemed: iss is the authorization response's iss parameter, sent
	// says whether it had one.
	CheckIssuer(ctx context.Context, iss string, sent bool) error
	// Exchange redeems the code (with the PKCE verifier), verifies the
	// id_token and nonce where applicable, and fetches the profile.
	Exchange(ctx context.Context, code, verifier, nonce string) (*Result, error)
	// Type is "oauth" or "oidc" (the account type stored).
	Type() string
	// Refresh spends a refresh token at the token endpoint (the provider
	// tokens kept with store_tokens). A refusal is the provider's
	// *oauth2.RetrieveError (ErrorCode "invalid_grant": sign in again).
	Refresh(ctx context.Context, refreshToken string) (*oauth2.Token, error)
}

// reserved are authorization parameters a caller can never override:
// overriding them would defeat the state, PKCE or nonce checks.
var reserved = map[string]bool{
	"state": true, "nonce": true, "code_challenge": true, "code_challenge_method": true,
	"client_id": true, "redirect_uri": true, "response_type": true, "client_secret": true,
}

// authOptions turns extra parameters and the checks into oauth2 options.
func authOptions(params url.Values, verifier, nonce string) []oauth2.AuthCodeOption {
	var opts []oauth2.AuthCodeOption
	for k, vs := range params {
		if reserved[k] || len(vs) == 0 {
			continue
		}
		opts = append(opts, oauth2.SetAuthURLParam(k, vs[0]))
	}
	if verifier != "" {
		opts = append(opts, oauth2.S256ChallengeOption(verifier))
	}
	if nonce != "" {
		opts = append(opts, oauth2.SetAuthURLParam("nonce", nonce))
	}
	return opts
}

// exchange redeems a code with the verifier, through client.
func exchange(ctx context.Context, conf *oauth2.Config, client *http.Client, code, verifier string) (*oauth2.Token, error) {
	if code == "" {
		return nil, errors.New("no authorization code in the callback")
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
	var opts []oauth2.AuthCodeOption
	if verifier != "" {
		opts = append(opts, oauth2.VerifierOption(verifier))
	}
	tok, err := conf.Exchange(ctx, code, opts...)
	if err != nil {
		return nil, fmt.Errorf("exchange code: %w", endpointError(err))
	}
	return tok, nil
}

// refresh spends refreshToken through client. A response without a new
// refresh token keeps the old one (oauth2's refresher), as a provider that
// does not rotate them means.
func refresh(ctx context.Context, conf *oauth2.Config, client *http.Client, refreshToken string) (*oauth2.Token, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
	tok, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		return nil, fmt.Errorf("refresh token: %w", endpointError(err))
	}
	return tok, nil
}

// maxLoggedCode bounds the provider's error code in a logged error.
const maxLoggedCode = 64

// tokenEndpointError is a token endpoint's refusal as latchkey logs it:
// the status, content type and error code (quoted, bounded), not the
// body oauth2's error prints, which a failing provider or a proxy may
// fill with anything (the request echoed, refresh token and all; terminal
// escapes). The *oauth2.RetrieveError stays reachable through errors.As.
type tokenEndpointError struct{ re *oauth2.RetrieveError }

func (e tokenEndpointError) Error() string {
	msg := "token endpoint answered"
	if r := e.re.Response; r != nil {
		ct := cut(strings.Map(dropControl, strings.ToValidUTF8(r.Header.Get("Content-Type"), "")), maxLoggedCode)
		msg += fmt.Sprintf(" HTTP %d (%s)", r.StatusCode, ct)
	}
	if c := e.re.ErrorCode; c != "" {
		msg += fmt.Sprintf(": error %q", cut(c, maxLoggedCode))
	}
	return msg
}

func (e tokenEndpointError) Unwrap() error { return e.re }

// endpointError is err with a *oauth2.RetrieveError described by
// tokenEndpointError.
func endpointError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return tokenEndpointError{re}
	}
	return err
}

// defaultHTTPClient bounds every call to an identity provider.
func defaultHTTPClient() *http.Client { return &http.Client{Timeout: 10 * time.Second} }
