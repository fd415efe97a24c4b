package openid

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

const (
	kindAccess  = "access"
	kindRefresh = "refresh"
)

// grant is what a token continues: the user, client, scopes and sign-in.
// scopes are the access token's; granted the refresh token's, which stay
// the grant's when a refresh asks for fewer (RFC 6749 §6: the new refresh
// token's scope is the old one's).
type grant struct {
	family, userID, clientID       string
	scopes, granted, audience, amr []string
	authTime                       time.Time
}

func grantOf(req op.TokenRequest) (*grant, error) {
	switch r := req.(type) {
	case authRequest:
		return &grant{
			family: r.row.ID, userID: r.GetSubject(), clientID: r.row.ClientID,
			scopes: r.GetScopes(), granted: r.GetScopes(), audience: r.GetAudience(), amr: r.GetAMR(), authTime: r.GetAuthTime(),
		}, nil
	case *refreshRequest:
		return &grant{
			family: r.row.FamilyID, userID: r.row.UserID, clientID: r.row.ClientID,
			scopes: r.scopes, granted: strings.Fields(r.row.Scopes), audience: r.GetAudience(), amr: r.GetAMR(), authTime: r.row.AuthTime,
		}, nil
	}
	return nil, oidc.ErrUnsupportedGrantType()
}

func (s *Service) token(g *grant, kind string, ttl time.Duration) *openidstore.Token {
	now := s.now()
	return &openidstore.Token{
		ID: randomID(), Kind: kind, FamilyID: g.family, UserID: g.userID, ClientID: g.clientID,
		Scopes: strings.Join(g.scopes, " "), Audience: strings.Join(g.audience, " "), AuthTime: g.authTime,
		AMR: strings.Join(g.amr, " "), Expires: now.Add(ttl), CreatedAt: now,
	}
}

// exchangeCode marks a code's request exchanged, once, and stores the
// tokens it issues in the same transaction: the second exchange of one
// code (two racing, or a replay) revokes what the first issued, which is
// then there to revoke.
func (s *Service) exchangeCode(ctx context.Context, ar authRequest, access, refresh *openidstore.Token) error {
	won, err := s.store.ExchangeCode(ctx, ar.row.ID, s.now(), access, refresh)
	if err != nil {
		return oidc.ErrServerError().WithParent(err) // the store says "exchange code"
	}
	if !won {
		s.codeReused(ctx, ar.row.ID)
		return oidc.ErrInvalidGrant().WithDescription("code already used")
	}
	return nil
}

// CreateAccessToken issues an access token (no refresh token asked).
func (s *Service) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	if err := s.reusedToken(ctx, req); err != nil {
		return "", time.Time{}, err
	}
	g, err := grantOf(req)
	if err != nil {
		return "", time.Time{}, err
	}
	ar, ok := req.(authRequest)
	if !ok {
		return "", time.Time{}, oidc.ErrUnsupportedGrantType() // a refresh always rotates (CreateAccessAndRefreshTokens)
	}
	if err := s.prepareIDToken(ctx, g); err != nil {
		return "", time.Time{}, err
	}
	access := s.token(g, kindAccess, s.set.AccessTTL)
	if err := s.exchangeCode(ctx, ar, access, nil); err != nil {
		return "", time.Time{}, err
	}
	return access.ID, access.Expires, nil
}

// CreateAccessAndRefreshTokens issues an access token and a refresh token:
// at a code's exchange (offline_access), or rotating the refresh token
// being used — which must still be unused; if another request used it
// first, this is a reuse and the family is revoked.
func (s *Service) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, _ string) (string, string, time.Time, error) {
	if err := s.reusedToken(ctx, req); err != nil {
		return "", "", time.Time{}, err
	}
	g, err := grantOf(req)
	if err != nil {
		return "", "", time.Time{}, err
	}
	if err := s.prepareIDToken(ctx, g); err != nil {
		return "", "", time.Time{}, err
	}
	access := s.token(g, kindAccess, s.set.AccessTTL)
	refresh := s.token(g, kindRefresh, s.set.RefreshTTL)
	refresh.Scopes = strings.Join(g.granted, " ")
	value := newRefreshToken()
	h := hashToken(value)
	refresh.TokenHash = &h
	if rr, ok := req.(*refreshRequest); ok {
		won, err := s.store.RotateRefresh(ctx, rr.row.ID, s.now(), access, refresh)
		if err != nil {
			return "", "", time.Time{}, oidc.ErrServerError().WithParent(err) // the store says "rotate refresh token"
		}
		if !won {
			s.refreshReused(ctx, rr.row)
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("refresh token already used")
		}
		return access.ID, value, access.Expires, nil
	}
	ar, ok := req.(authRequest)
	if !ok {
		return "", "", time.Time{}, oidc.ErrUnsupportedGrantType()
	}
	if err := s.exchangeCode(ctx, ar, access, refresh); err != nil {
		return "", "", time.Time{}, err
	}
	return access.ID, value, access.Expires, nil
}

// TokenRequestByRefreshToken reads a refresh token for its use: unknown,
// revoked, expired or of a user whose sessions were revoked since the
// sign-in it continues — refused; already used — a reuse, which revokes
// the family (the token was stolen, or the client raced itself) once the
// library has found the token the authenticated client's (reusedToken).
func (s *Service) TokenRequestByRefreshToken(ctx context.Context, value string) (op.RefreshTokenRequest, error) {
	row, err := s.store.RefreshToken(ctx, hashToken(value))
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, oidc.ErrInvalidGrant().WithDescription("unknown refresh token")
		}
		return nil, oidc.ErrServerError().WithParent(fmt.Errorf("read refresh token: %w", err))
	}
	switch {
	case row.Kind != kindRefresh || row.RevokedAt != nil:
		return nil, oidc.ErrInvalidGrant().WithDescription("refresh token revoked")
	case row.UsedAt != nil:
		return &refreshRequest{row: row, reused: true}, nil // revoked at issuance (reusedToken)
	case !s.now().Before(row.Expires):
		return nil, oidc.ErrInvalidGrant().WithDescription("refresh token expired")
	}
	if err := s.stillSignedIn(ctx, row); err != nil {
		return nil, err
	}
	return &refreshRequest{row: row, scopes: strings.Fields(row.Scopes)}, nil
}

// reusedToken acts on a reused code or refresh token, which the lookups
// let through: the library asks for tokens only after it authenticated
// the client, found the code or token to be that client's and checked
// the code's verifier, so the reuse is the client's own secret's and
// revokes the family; any other caller was refused first and ended
// nothing.
func (s *Service) reusedToken(ctx context.Context, req op.TokenRequest) error {
	switch r := req.(type) {
	case authRequest:
		if r.reused {
			s.codeReused(ctx, r.row.ID)
			return oidc.ErrInvalidGrant().WithDescription("code already used")
		}
	case *refreshRequest:
		if r.reused {
			s.refreshReused(ctx, r.row)
			return oidc.ErrInvalidGrant().WithDescription("refresh token already used")
		}
	}
	return nil
}

// stillSignedIn refuses a token whose sign-in a session revocation ended
// ("sign out everywhere", a password reset, an admin's revoke): the
// grant goes with the sessions.
func (s *Service) stillSignedIn(ctx context.Context, row *openidstore.Token) error {
	ended, err := s.signInEnded(ctx, row.UserID, row.AuthTime)
	if err != nil {
		return err
	}
	if ended {
		ctx, cancel := finish.Detached(ctx)
		defer cancel()
		if _, err := s.store.RevokeFamily(ctx, row.FamilyID, s.now()); err != nil {
			s.log.ErrorContext(ctx, "openid: revoke the tokens of ended sessions", "err", err)
		}
		return oidc.ErrInvalidGrant().WithDescription("the sign-in behind this token has ended")
	}
	return nil
}

// signInEnded reports whether a session revocation ended userID's sign-in
// of authTime.
func (s *Service) signInEnded(ctx context.Context, userID string, authTime time.Time) (bool, error) {
	nb, err := s.store.RevokedNotBefore(ctx, userID)
	if err != nil {
		return false, oidc.ErrServerError().WithParent(fmt.Errorf("read revocations: %w", err))
	}
	return !nb.IsZero() && authTime.Before(nb), nil
}

func (s *Service) refreshReused(ctx context.Context, row *openidstore.Token) {
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	n, err := s.store.RevokeFamily(ctx, row.FamilyID, s.now())
	if err != nil {
		s.log.ErrorContext(ctx, "openid: revoke the family of a reused refresh token", "err", err)
		return
	}
	s.log.WarnContext(ctx, "openid: refresh token used twice; its family is revoked", "client", row.ClientID, "family", row.FamilyID, "revoked", n)
}

// GetRefreshTokenInfo names a refresh token for revocation.
func (s *Service) GetRefreshTokenInfo(ctx context.Context, clientID, value string) (string, string, error) {
	row, err := s.store.RefreshToken(ctx, hashToken(value))
	if errors.Is(err, ErrNotFound) {
		return "", "", op.ErrInvalidRefreshToken
	}
	if err != nil {
		return "", "", fmt.Errorf("read refresh token: %w", err)
	}
	return row.UserID, row.ID, nil
}

// RevokeToken is RFC 7009: a refresh token revokes its whole family (the
// access tokens issued with it too), an access token itself. An unknown
// token is not an error (§2.2); another client's token is refused. id is
// the row's id, or the value itself when the library could not name it:
// a refresh token sent with token_type_hint=access_token, which the
// library does not look up as one (§2.1 says the search goes on).
func (s *Service) RevokeToken(ctx context.Context, id, _, clientID string) *oidc.Error {
	row, err := s.store.Token(ctx, id)
	if errors.Is(err, ErrNotFound) {
		row, err = s.store.RefreshToken(ctx, hashToken(id))
	}
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	if row.ClientID != clientID {
		return oidc.ErrInvalidClient().WithDescription("the token was not issued to this client")
	}
	if row.Kind == kindRefresh {
		_, err = s.store.RevokeFamily(ctx, row.FamilyID, s.now())
	} else {
		err = s.store.RevokeToken(ctx, row.ID, s.now())
	}
	if err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	return nil
}

// activeToken is an access token that may be used now: known, unrevoked,
// unexpired, of subject, and its sign-in not revoked since.
func (s *Service) activeToken(ctx context.Context, id, subject string) (*openidstore.Token, error) {
	row, err := s.store.Token(ctx, id)
	if err != nil {
		return nil, notFound(err, "token")
	}
	if row.Kind != kindAccess || row.RevokedAt != nil || !s.now().Before(row.Expires) || row.UserID != subject {
		return nil, errors.New("token is not active")
	}
	if err := s.stillSignedIn(ctx, row); err != nil {
		return nil, err
	}
	return row, nil
}

// TerminateSession: RP-initiated logout goes through
// TerminateSessionFromRequest (logout.go).
func (s *Service) TerminateSession(context.Context, string, string) error { return nil }

// newRefreshToken is 256 random bits, base64url.
func newRefreshToken() string { return random.Base64URL(32) }
