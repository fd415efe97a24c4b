package openid

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ScopeGroups asks for the groups claim.
const ScopeGroups = "groups"

// SetUserinfoFromScopes is deprecated in the library;
// SetUserinfoFromRequest fills ID tokens.
func (s *Service) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest fills an ID token's claims from the scopes. A
// refresh's ID token gets the acr of its sign-in here, as its amr and
// auth_time are kept (OpenID Connect Core §12.2): the library sets acr
// from an authorization request only.
func (s *Service) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.fillUserinfo(ctx, info, req.GetSubject(), scopes); err != nil {
		return err
	}
	if r, ok := req.(*refreshRequest); ok {
		info.AppendClaims("acr", acr(r.GetAMR()))
	}
	return nil
}

// SetUserinfoFromToken answers /userinfo for an active access token.
func (s *Service) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	row, err := s.activeToken(ctx, tokenID, subject)
	if err != nil {
		return err
	}
	return s.fillUserinfo(ctx, info, row.UserID, strings.Fields(row.Scopes))
}

// SetIntrospectionFromToken answers RFC 7662 introspection for an active
// access token issued to the asking client (a resource server uses its
// client's credentials); anything else is inactive.
func (s *Service) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	row, err := s.activeToken(ctx, tokenID, subject)
	if err != nil {
		return err
	}
	if row.ClientID != clientID {
		return errors.New("token of another client")
	}
	scopes := strings.Fields(row.Scopes)
	info := new(oidc.UserInfo)
	if err := s.fillUserinfo(ctx, info, row.UserID, scopes); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope = scopes
	resp.ClientID = row.ClientID
	resp.TokenType = oidc.BearerToken
	resp.Expiration = oidc.FromTime(row.Expires)
	resp.IssuedAt = oidc.FromTime(row.CreatedAt)
	resp.AuthTime = oidc.FromTime(row.AuthTime)
	resp.Subject = row.UserID
	resp.Audience = strings.Fields(row.Audience)
	resp.AuthenticationMethodsReferences = strings.Fields(row.AMR)
	resp.JWTID = row.ID
	return nil
}

// fillUserinfo sets the claims the scopes grant: sub always; profile:
// name, picture; email: email, email_verified; groups: groups.
func (s *Service) fillUserinfo(ctx context.Context, info *oidc.UserInfo, userID string, scopes []string) error {
	u, groups, err := s.claimsSource(ctx, userID, scopes)
	if err != nil {
		return err
	}
	info.Subject = u.ID
	if slices.Contains(scopes, oidc.ScopeProfile) {
		info.Name, info.Picture = deref(u.Name), s.pictureURL(deref(u.Image))
	}
	if slices.Contains(scopes, oidc.ScopeEmail) && u.Email != nil {
		info.Email, info.EmailVerified = *u.Email, oidc.Bool(verifiedEmail(u) != nil)
	}
	if groups != nil {
		info.AppendClaims("groups", groups)
	}
	return nil
}

// pictureURL is the picture claim of an image: a URL (OpenID Connect
// Core §5.1), which a relying party fetches from wherever it runs. An
// absolute http(s) URL goes as it is; a path on the app's origin (an
// imported user's "/uploads/x.png", which the app's own pages resolve) is
// made absolute on it; anything else, or no origin to resolve on, is left
// out ("").
func (s *Service) pictureURL(image string) string {
	u, err := url.Parse(image)
	switch {
	case image == "" || err != nil:
		return ""
	case u.Scheme == "http" || u.Scheme == "https":
		if u.Host == "" {
			return ""
		}
		return image
	case u.Scheme != "" || u.Host != "" || !strings.HasPrefix(image, "/") || strings.HasPrefix(image, "//"):
		return ""
	}
	base, err := url.Parse(s.set.Origin)
	if err != nil || base.Host == "" {
		return ""
	}
	return base.ResolveReference(u).String()
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
