package providertokens

import (
	"errors"
	"time"

	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/tokenstore"
)

// The token columns of models.Account, as sealed.
const (
	colAccess  = "access_token"
	colRefresh = "refresh_token"
	colID      = "id_token"
)

// set is an account's tokens in the clear, in memory only.
type set struct {
	access, refresh, id *string
	expiresAt           *int64
	tokenType, scope    *string
}

func (t set) token() Token {
	out := Token{AccessToken: deref(t.access), TokenType: deref(t.tokenType), Scope: deref(t.scope)}
	if t.expiresAt != nil {
		out.ExpiresAt = *t.expiresAt
	}
	return out
}

// tokenSet is the set a token response gives; what a refresh response
// leaves out (the refresh token when not rotated, the id_token, the
// scope) is kept from prev.
func tokenSet(tok *oauth2.Token, idToken string, prev *set, now time.Time) set {
	t := set{access: opt(tok.AccessToken), refresh: opt(tok.RefreshToken), id: opt(idToken), tokenType: opt(tok.TokenType)}
	switch {
	case tok.ExpiresIn > 0:
		// By the service's clock, which decides freshness (fresh), not
		// the one oauth2 stamped Expiry with: the two are one in
		// production, and a test's settable clock stays consistent.
		exp := now.Unix() + tok.ExpiresIn
		t.expiresAt = &exp
	case !tok.Expiry.IsZero():
		exp := tok.Expiry.Unix()
		t.expiresAt = &exp
	}
	if sc, ok := tok.Extra("scope").(string); ok {
		t.scope = opt(sc)
	}
	if prev != nil {
		t.refresh = or(t.refresh, prev.refresh)
		t.id = or(t.id, prev.id)
		t.scope = or(t.scope, prev.scope)
		t.tokenType = or(t.tokenType, prev.tokenType)
	}
	return t
}

func idTokenOf(tok *oauth2.Token) string {
	s, _ := tok.Extra("id_token").(string)
	return s
}

// sealSet seals the set's tokens for account id.
func (s *Service) sealSet(id string, t set) (tokenstore.Sealed, error) {
	out := tokenstore.Sealed{ExpiresAt: t.expiresAt, TokenType: t.tokenType, Scope: t.scope}
	var err, e error
	out.AccessToken, e = s.seal.seal(id, colAccess, t.access)
	err = errors.Join(err, e)
	out.RefreshToken, e = s.seal.seal(id, colRefresh, t.refresh)
	err = errors.Join(err, e)
	out.IDToken, e = s.seal.seal(id, colID, t.id)
	return out, errors.Join(err, e)
}

// openSet opens an account's tokens; current is false when any was sealed
// under an older secret.
func (s *Service) openSet(acc *tokenstore.Account) (set, bool, error) {
	t := set{expiresAt: acc.ExpiresAt, tokenType: acc.TokenType, scope: acc.Scope}
	current := true
	for _, c := range []struct {
		col    string
		sealed *string
		dst    **string
	}{{colAccess, acc.AccessToken, &t.access}, {colRefresh, acc.RefreshToken, &t.refresh}, {colID, acc.IDToken, &t.id}} {
		plain, cur, err := s.seal.open(acc.ID, c.col, c.sealed)
		if err != nil {
			return set{}, false, err
		}
		current = current && cur
		if c.sealed != nil {
			*c.dst = &plain
		}
	}
	return t, current, nil
}

func wrapNotFound(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return ErrNotStored
	}
	return err
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func or(a, b *string) *string {
	if a != nil {
		return a
	}
	return b
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
