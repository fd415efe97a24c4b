package oauth

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
)

// gothClient is a provider from the goth catalogue.
type gothClient struct {
	p *catalogue.Provider
}

// NewGoth builds a catalogue provider.
func NewGoth(cfg catalogue.Config) (Client, error) {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = defaultHTTPClient()
	}
	cfg.HTTPClient = bounded(cfg.HTTPClient)
	p, err := catalogue.Build(cfg)
	if err != nil {
		return nil, err
	}
	return &gothClient{p: p}, nil
}

func (g *gothClient) UsesPKCE() bool  { return g.p.Spec.PKCE }
func (g *gothClient) UsesNonce() bool { return false }
func (g *gothClient) Type() string    { return "oauth" }

func (g *gothClient) AuthURL(_ context.Context, state, verifier, _ string, params url.Values) (string, error) {
	return g.p.AuthCodeURL(state, authOptions(params, verifier, "")...), nil
}

// CheckIssuer accepts any response: a catalogue provider names no issuer
// to compare with (openid-client has none for them either).
func (g *gothClient) CheckIssuer(context.Context, string, bool) error { return nil }

func (g *gothClient) Exchange(ctx context.Context, code, verifier, _ string) (*Result, error) {
	tok, err := exchange(ctx, g.p.OAuth2, g.p.HTTPClient, code, verifier)
	if err != nil {
		return nil, err
	}
	prof, err := g.p.Profile(ctx, tok)
	if err != nil {
		return nil, fmt.Errorf("fetch profile: %w", err)
	}
	idToken, _ := tok.Extra("id_token").(string)
	p, err := Profile{
		ID: prof.ID, Name: prof.Name, Image: prof.Image,
		Email: strings.ToLower(prof.Email), EmailVerified: prof.EmailVerified && prof.Email != "",
	}.bounded()
	if err != nil {
		return nil, err
	}
	return &Result{Profile: p, Token: tok, IDToken: idToken}, nil
}

func (g *gothClient) Refresh(ctx context.Context, refreshToken string) (*oauth2.Token, error) {
	return refresh(ctx, g.p.OAuth2, g.p.HTTPClient, refreshToken)
}
