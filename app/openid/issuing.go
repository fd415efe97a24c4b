package openid

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/latchkey-auth/latchkey/models"
)

// The library builds a token response's ID token after the storage has
// issued the tokens: after the code is spent or the refresh token
// rotated. Whatever the ID token is built from that could fail — the
// signing key, the user's row, their groups — is read first
// (prepareIDToken) and kept in the request's context for the library's
// calls that follow (SigningKey, SetUserinfoFromRequest): a database that
// fails refuses the request with nothing spent, so the client's retry
// works rather than being taken for a reuse that revokes the family.

// issuingKey carries a token request's *issuing in its context.
type issuingKey struct{}

// issuing is what one token request's ID token is built from.
type issuing struct {
	key    *parsedKey
	user   *models.User
	groups []string // read with the groups scope
}

// WithTokenRequest gives a token endpoint request's context the room
// prepareIDToken fills: the library passes the storage only the context.
func WithTokenRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, issuingKey{}, &issuing{})
}

func issuingOf(ctx context.Context) *issuing {
	in, _ := ctx.Value(issuingKey{}).(*issuing)
	return in
}

// errUserGone: the user a grant is for no longer exists.
var errUserGone = errors.New("user no longer exists")

// prepareIDToken reads what grant g's ID token is built from, before
// anything is spent, and keeps it in ctx's room (none: the reads still
// refuse a failing database before the tokens are issued). A user gone is
// invalid_grant; a read that fails, server_error.
func (s *Service) prepareIDToken(ctx context.Context, g *grant) error {
	key, err := s.keys.signing(ctx)
	if err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	u, groups, err := s.claimsSource(ctx, g.userID, g.scopes)
	if errors.Is(err, errUserGone) {
		return oidc.ErrInvalidGrant().WithDescription("the user no longer exists")
	}
	if err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	if in := issuingOf(ctx); in != nil {
		in.key, in.user, in.groups = key, u, groups
	}
	return nil
}

// claimsSource is what a user's claims are filled from: the user and,
// with the groups scope, their groups (nil without). A token request's
// are the ones prepareIDToken read.
func (s *Service) claimsSource(ctx context.Context, userID string, scopes []string) (*models.User, []string, error) {
	if in := issuingOf(ctx); in != nil && in.user != nil && in.user.ID == userID {
		return in.user, in.groups, nil
	}
	u, err := s.store.UserByID(ctx, userID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil, errUserGone
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read user: %w", err)
	}
	if !slices.Contains(scopes, ScopeGroups) || s.groups == nil {
		return u, nil, nil
	}
	groups, err := s.groups.Of(ctx, u.ID, verifiedEmail(u))
	if err != nil {
		return nil, nil, fmt.Errorf("read groups: %w", err)
	}
	if groups == nil {
		groups = []string{}
	}
	return u, groups, nil
}

// verifiedEmail is the user's address when it is verified, else nil.
func verifiedEmail(u *models.User) *string {
	if u.EmailVerified == nil {
		return nil
	}
	return u.Email
}
