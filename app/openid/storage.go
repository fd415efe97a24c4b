package openid

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// Service implements the OP library's storage: the library parses and
// answers, these methods decide.
var _ op.Storage = (*Service)(nil)

// CreateAuthRequest stores a validated /authorize request. Beyond the
// library's checks: the redirect URI is registered (redirectRegistered:
// a native app's loopback one differs in its port only), openid must be
// asked for, scopes are narrowed to what
// the client may have, a public client must send a PKCE S256 challenge,
// and a client with refresh_tokens on asks offline_access implicitly.
// A request that passes them counts against its client's limits
// (allowRequest) before it is stored.
// hintSubject is the verified id_token_hint's subject ("" without one).
func (s *Service) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, hintSubject string) (op.AuthRequest, error) {
	c, err := s.client(ctx, req.ClientID)
	if err != nil {
		return nil, err
	}
	if !c.redirectRegistered(req.RedirectURI) {
		return nil, oidc.ErrInvalidRequestRedirectURI().WithDescription("the redirect_uri is not registered for this client")
	}
	if err := withinLimits(req); err != nil {
		return nil, err
	}
	if !slices.Contains(req.Scopes, oidc.ScopeOpenID) {
		return nil, oidc.ErrInvalidScope().WithDescription("the openid scope is required")
	}
	if req.CodeChallenge != "" && req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	}
	if c.Public && req.CodeChallenge == "" {
		return nil, oidc.ErrInvalidRequest().WithDescription("a public client must use PKCE (S256)")
	}
	var scopes []string
	for _, sc := range req.Scopes {
		if (sc == oidc.ScopeOpenID || c.IsScopeAllowed(sc)) && !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	if c.Refresh && !slices.Contains(scopes, oidc.ScopeOfflineAccess) {
		scopes = append(scopes, oidc.ScopeOfflineAccess)
	}
	if err := s.allowRequest(ctx); err != nil {
		return nil, err
	}
	now := s.now()
	row := &openidstore.AuthRequest{
		ID: randomID(), ClientID: c.ID, RedirectURI: req.RedirectURI, Scopes: strings.Join(scopes, " "),
		State: req.State, Nonce: req.Nonce, ResponseType: string(req.ResponseType), ResponseMode: string(req.ResponseMode),
		CodeChallenge: req.CodeChallenge, CodeChallengeMethod: string(req.CodeChallengeMethod),
		Prompt: strings.Join(req.Prompt, " "), LoginHint: req.LoginHint, HintSubject: hintSubject, UILocales: req.UILocales.String(),
		CreatedAt: now, Expires: now.Add(s.set.RequestTTL),
	}
	if req.MaxAge != nil {
		m := int64(*req.MaxAge)
		row.MaxAge = &m
	}
	if err := s.store.CreateAuthRequest(ctx, row); err != nil {
		return nil, fmt.Errorf("store auth request: %w", err)
	}
	return authRequest{row: row}, nil
}

// The longest free-text values an authorization request may store: anyone
// can send one, unauthenticated, and each is kept until the request
// expires. RFC 7636 fixes code_challenge's length (S256's is 43).
const (
	maxState, maxNonce         = 2048, 2048
	maxLoginHint, maxUILocales = 512, 256
	minChallenge, maxChallenge = 43, 128
)

// withinLimits refuses a request with a value over its limit. An oversized
// state is refused with a 400 of the library's, not sent back to the
// client in the redirect every other refusal is; the others are the
// client's invalid_request.
func withinLimits(req *oidc.AuthRequest) error {
	if len(req.State) > maxState {
		return oidc.ErrInvalidRequestRedirectURI().WithDescription("state is longer than %d bytes", maxState)
	}
	switch {
	case len(req.Nonce) > maxNonce:
		return oidc.ErrInvalidRequest().WithDescription("nonce is longer than %d bytes", maxNonce)
	case len(req.LoginHint) > maxLoginHint:
		return oidc.ErrInvalidRequest().WithDescription("login_hint is longer than %d bytes", maxLoginHint)
	case len(req.UILocales.String()) > maxUILocales:
		return oidc.ErrInvalidRequest().WithDescription("ui_locales is longer than %d bytes", maxUILocales)
	case req.CodeChallenge != "" && (len(req.CodeChallenge) < minChallenge || len(req.CodeChallenge) > maxChallenge):
		return oidc.ErrInvalidRequest().WithDescription("code_challenge must be %d to %d characters", minChallenge, maxChallenge)
	case !answerableMode(req.ResponseMode):
		return oidc.ErrInvalidRequest().WithDescription("response_mode must be query or fragment")
	}
	return nil
}

// answerableMode: the code goes back in the query (the default) or the
// fragment, the modes discovery's absent response_modes_supported means.
// The library answers form_post with a page that posts itself from an
// inline onload handler, which the pages' Content-Security-Policy blocks:
// the browser would stop on a blank page holding the code. Any other mode
// the library would answer in the query, not as the client asked.
func answerableMode(m oidc.ResponseMode) bool {
	return m == "" || m == oidc.ResponseModeQuery || m == oidc.ResponseModeFragment
}

// AuthRequestByID is an unexpired request.
func (s *Service) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	row, err := s.store.AuthRequest(ctx, id, s.now())
	if err != nil {
		return nil, notFound(err, "auth request")
	}
	return authRequest{row: row}, nil
}

// AuthRequestByCode finds the request a code was issued for. A code
// already exchanged is a reuse (RFC 6749 §4.1.2: the code leaked, or is
// replayed): every token its exchange led to is revoked — once the
// library has authenticated the client, compared it with the code's and
// checked the verifier (reusedCode).
func (s *Service) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	row, err := s.store.AuthRequestByCode(ctx, hashToken(code), s.now())
	if err != nil {
		return nil, notFound(err, "code")
	}
	if row.ExchangedAt != nil {
		return authRequest{row: row, reused: true}, nil // revoked at issuance (reusedCode)
	}
	if row.UserID == nil || row.AuthTime == nil {
		return nil, errors.New("code of an unfinished request") // SaveAuthCode follows completion: never
	}
	ended, err := s.signInEnded(ctx, *row.UserID, *row.AuthTime)
	if err != nil {
		return nil, err
	}
	if ended {
		// A code kept across "sign out everywhere" (a stolen session's)
		// would otherwise still buy a valid ID token.
		return nil, errors.New("the sign-in behind this code has ended")
	}
	return authRequest{row: row}, nil
}

func (s *Service) codeReused(ctx context.Context, id string) {
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	n, err := s.store.RevokeFamily(ctx, id, s.now())
	if err != nil {
		s.log.ErrorContext(ctx, "openid: revoke the tokens of a reused code", "err", err)
		return
	}
	s.log.WarnContext(ctx, "openid: authorization code used twice; its tokens are revoked", "request", id, "revoked", n)
}

// SaveAuthCode keeps the code's hash; a request gets one code only.
func (s *Service) SaveAuthCode(ctx context.Context, id, code string) error {
	ok, err := s.store.SaveCode(ctx, id, hashToken(code))
	if err != nil {
		return fmt.Errorf("store code: %w", err)
	}
	if !ok {
		return oidc.ErrInvalidRequest().WithDescription("this request already has a code")
	}
	return nil
}

// DeleteAuthRequest keeps the request: once exchanged it stays, until it
// expires, to tell a reused code from an unknown one.
func (s *Service) DeleteAuthRequest(context.Context, string) error { return nil }

// GetClientByClientID is the client, or a plain error for an unknown one.
func (s *Service) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.client(ctx, id)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AuthorizeClientIDSecret checks a confidential client's secret in
// constant time. An unknown client id's secret is compared too, against a
// stand-in. The time still differs with where the id is (config.yaml's:
// no read; a stored row; none: BenchmarkClientAuthentication), which is
// left: client ids are not secret (RFC 6749 §2.2), and end_session and
// /authorize tell a known id outright.
func (s *Service) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	c, err := s.client(ctx, id)
	if errors.Is(err, errUnknownClient) {
		storedClient(&s.standIn, &s.set).checkSecret(secret, s.now())
	}
	if err != nil {
		return err
	}
	if !c.checkSecret(secret, s.now()) {
		return errors.New("wrong client secret")
	}
	return nil
}

// SigningKey is the newest active key of the configured algorithm.
// A token request's is the one prepareIDToken read.
func (s *Service) SigningKey(ctx context.Context) (op.SigningKey, error) {
	if in := issuingOf(ctx); in != nil && in.key != nil {
		return signingKey{in.key}, nil
	}
	k, err := s.keys.signing(ctx)
	if err != nil {
		return nil, err
	}
	return signingKey{k}, nil
}

// SignatureAlgorithms: the configured one first; both verify (an
// id_token_hint signed before signing_algorithm changed still verifies).
func (s *Service) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	out := []jose.SignatureAlgorithm{s.keys.alg}
	for _, a := range Algorithms {
		if a != s.keys.alg {
			out = append(out, a)
		}
	}
	return out, nil
}

// KeySet is every published key: the signing ones, the ones published
// ahead of signing, and retired ones whose tokens may still be live; read
// from the store at each call (keyRing.published).
func (s *Service) KeySet(ctx context.Context) ([]op.Key, error) {
	keys, err := s.keys.published(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]op.Key, len(keys))
	for i, k := range keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

// Health: the store's health is /health/ready's business.
func (s *Service) Health(context.Context) error { return nil }

// Unsupported grants: JWT profile and private_key_jwt are off.

func (s *Service) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("private_key_jwt is not supported")
}

func (s *Service) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("the JWT profile grant is not supported")
}

// GetPrivateClaimsFromScopes: access tokens are opaque, so they carry no
// claims.
func (s *Service) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

// notFound turns the store's not-found into a plain error (the library
// answers invalid_grant / invalid_request), and wraps anything else.
func notFound(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%s not found or expired", what)
	}
	return oidc.ErrServerError().WithParent(fmt.Errorf("read %s: %w", what, err))
}

// randomID is 128 random bits in hex: ids of requests and tokens (never
// a ':', which the library's sealed access tokens use as a separator).
func randomID() string { return random.Hex(16) }

// hashToken is how codes and refresh tokens are stored: SHA-256, hex
// (they are 256-bit random values, so no salt or stretching is needed).
func hashToken(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}
