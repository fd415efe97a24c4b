package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDCConfig configures a generic OpenID Connect provider.
type OIDCConfig struct {
	Issuer, ClientID, ClientSecret, RedirectURL string
	Scopes                                      []string
	HTTPClient                                  *http.Client
	// TrustEmail keeps and marks verified an address the IdP says is not
	// (config trust_email).
	TrustEmail bool
}

// oidcClient discovers its issuer on first use (so latchkey starts even when
// the IdP is down) and verifies every id_token's signature, issuer,
// audience, expiry and nonce with go-oidc.
type oidcClient struct {
	cfg OIDCConfig

	mu       sync.Mutex
	conf     *oauth2.Config
	verifier *oidc.IDTokenVerifier
	provider *oidc.Provider
	// issParam: the issuer says it sends iss in every authorization
	// response (authorization_response_iss_parameter_supported).
	issParam bool
}

// NewOIDC returns a generic OIDC client; discovery happens lazily.
func NewOIDC(cfg OIDCConfig) Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = defaultHTTPClient()
	}
	cfg.HTTPClient = bounded(cfg.HTTPClient)
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	return &oidcClient{cfg: cfg}
}

func (o *oidcClient) UsesPKCE() bool  { return true }
func (o *oidcClient) UsesNonce() bool { return true }
func (o *oidcClient) Type() string    { return "oidc" }

// discover fetches /.well-known/openid-configuration once. The network call
// runs outside the lock, bounded by the request's context, so a slow or down
// IdP does not queue every sign-in behind one request; a failure is retried
// on the next request.
func (o *oidcClient) discover(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	conf, verifier := o.conf, o.verifier
	o.mu.Unlock()
	if conf != nil {
		return conf, verifier, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.cfg.HTTPClient), o.cfg.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("discover issuer %s: %w", o.cfg.Issuer, err)
	}
	conf = &oauth2.Config{
		ClientID:     o.cfg.ClientID,
		ClientSecret: o.cfg.ClientSecret,
		RedirectURL:  o.cfg.RedirectURL,
		Endpoint:     p.Endpoint(),
		Scopes:       o.cfg.Scopes,
	}
	var meta struct {
		IssParam bool `json:"authorization_response_iss_parameter_supported"`
	}
	_ = p.Claims(&meta) // the document decoded once already; a bad field reads as false
	verifier = p.VerifierContext(oidc.ClientContext(context.Background(), o.cfg.HTTPClient), &oidc.Config{ClientID: o.cfg.ClientID})
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.conf == nil { // the first successful discovery wins
		o.provider, o.conf, o.verifier, o.issParam = p, conf, verifier, meta.IssParam
	}
	return o.conf, o.verifier, nil
}

func (o *oidcClient) AuthURL(ctx context.Context, state, verifier, nonce string, params url.Values) (string, error) {
	conf, _, err := o.discover(ctx)
	if err != nil {
		return "", err
	}
	return conf.AuthCodeURL(state, authOptions(params, verifier, nonce)...), nil
}

// CheckIssuer refuses an authorization response that names another
// issuer, or names none when the issuer says it always does (RFC 9207,
// as openid-client checks it): such a response may come from a mix-up,
// where another provider's code is fed to this one.
func (o *oidcClient) CheckIssuer(ctx context.Context, iss string, sent bool) error {
	if _, _, err := o.discover(ctx); err != nil {
		return err
	}
	o.mu.Lock()
	required := o.issParam
	o.mu.Unlock()
	switch {
	case sent && iss != o.cfg.Issuer:
		return fmt.Errorf("authorization response iss %q is not the issuer %q", iss, o.cfg.Issuer)
	case !sent && required:
		return errors.New("authorization response has no iss, which the issuer says it always sends")
	}
	return nil
}

// idClaims are the standard claims latchkey maps to a user.
type idClaims struct {
	Subject       string `json:"sub"`
	Name          string `json:"name"`
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"` // bool, or "true" from some IdPs
	Picture       string `json:"picture"`
	Nonce         string `json:"nonce"`
	AZP           string `json:"azp"`
	PreferredName string `json:"preferred_username"`
}

// unverified reports an e-mail the IdP explicitly says it has not verified.
// Such an address is dropped: trusting it would let anyone who can register
// "ceo@corp.example" at a permissive IdP pass allowed_email_domains, or
// pre-claim a user that the address's owner later signs into by e-mail.
// An absent claim is trusted, as many enterprise IdPs omit it.
func (c idClaims) unverified() bool {
	switch v := c.EmailVerified.(type) {
	case nil:
		return false
	case bool:
		return !v
	case string:
		return v != "true"
	default:
		return true
	}
}

func (o *oidcClient) Exchange(ctx context.Context, code, verifier, nonce string) (*Result, error) {
	conf, idv, err := o.discover(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := exchange(ctx, conf, o.cfg.HTTPClient, code, verifier)
	if err != nil {
		return nil, err
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, errors.New("token response has no id_token")
	}
	idt, err := idv.Verify(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("verify id_token: %w", err)
	}
	var c idClaims
	if err := idt.Claims(&c); err != nil {
		return nil, fmt.Errorf("read id_token claims: %w", err)
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(nonce)) != 1 {
		return nil, errors.New("id_token nonce does not match")
	}
	if err := authorizedParty(idt.Audience, c.AZP, o.cfg.ClientID); err != nil {
		return nil, err
	}
	if c.Email == "" || c.Name == "" {
		o.fillFromUserInfo(ctx, tok, &c)
	}
	p, err := c.profile(idt.Subject, o.cfg.TrustEmail).bounded()
	if err != nil {
		return nil, err
	}
	return &Result{Profile: p, Token: tok, IDToken: raw}, nil
}

// authorizedParty is the azp check go-oidc leaves out (OIDC Core 3.1.3.7,
// as openid-client does it): a token for several audiences must name the
// party it was issued to, and a named party must be this client, or the
// token was meant for another client of the IdP.
func authorizedParty(aud []string, azp, clientID string) error {
	if len(aud) > 1 && azp == "" {
		return errors.New("id_token has several audiences and no azp")
	}
	if azp != "" && azp != clientID {
		return fmt.Errorf("id_token azp %q is not this client", azp)
	}
	return nil
}

// profile maps verified id_token (and userinfo) claims to a Profile. An
// address the IdP marks unverified is dropped (see unverified) unless the
// operator trusts this IdP's addresses; any other address counts as
// verified, an absent email_verified claim included.
func (c idClaims) profile(subject string, trustEmail bool) Profile {
	email := strings.ToLower(c.Email)
	if c.unverified() && !trustEmail {
		email = ""
	}
	name := c.Name
	if name == "" {
		name = c.PreferredName
	}
	return Profile{ID: subject, Name: name, Email: email, EmailVerified: email != "", Image: c.Picture}
}

// fillFromUserInfo completes name/e-mail from the userinfo endpoint when the
// id_token lacks them; the subject must match, and failures are ignored.
func (o *oidcClient) fillFromUserInfo(ctx context.Context, tok *oauth2.Token, c *idClaims) {
	o.mu.Lock()
	p := o.provider
	o.mu.Unlock()
	ui, err := p.UserInfo(oidc.ClientContext(ctx, o.cfg.HTTPClient), oauth2.StaticTokenSource(tok))
	if err != nil || ui.Subject != c.Subject {
		return
	}
	var more idClaims
	if ui.Claims(&more) != nil {
		return
	}
	if c.Email == "" {
		c.Email = ui.Email
		c.EmailVerified = more.EmailVerified
	}
	if c.Name == "" {
		c.Name = more.Name
	}
	if c.Picture == "" {
		c.Picture = more.Picture
	}
}

func (o *oidcClient) Refresh(ctx context.Context, refreshToken string) (*oauth2.Token, error) {
	conf, _, err := o.discover(ctx)
	if err != nil {
		return nil, err
	}
	return refresh(ctx, conf, o.cfg.HTTPClient, refreshToken)
}
