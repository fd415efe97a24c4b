package openid

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// Client is one application that signs its users in through latchkey,
// from config.yaml or added by an admin. It implements op.Client.
type Client struct {
	ID, Name               string
	Public, FirstParty     bool
	Refresh                bool // refresh tokens without offline_access
	Redirects, PostLogouts []string
	Scopes                 []string // allowed
	// secret is the configured secret (config only); secretHash the
	// SHA-256 of the secret (admin-added clients, or secret_hash).
	secret     string
	secretHash []byte
	// previousHash is the SHA-256 of the secret a rotation replaced,
	// accepted until previousUntil (stored clients only).
	previousHash  []byte
	previousUntil time.Time
	set           *Settings
}

func configClient(c config.OpenIDClient, set Settings) *Client {
	cl := &Client{
		ID: c.ID, Name: c.Name, Public: c.Public, FirstParty: c.FirstParty, Refresh: c.RefreshTokens,
		Redirects: c.RedirectURIs, PostLogouts: c.PostLogoutRedirectURIs, Scopes: c.Scopes, secret: c.Secret, set: &set,
	}
	if h, ok := strings.CutPrefix(c.SecretHash, "sha256:"); ok {
		cl.secretHash, _ = hex.DecodeString(h) // validated by config
	}
	if len(cl.Scopes) == 0 {
		cl.Scopes = config.OpenIDScopes
	}
	return cl
}

func storedClient(c *openidstore.Client, set *Settings) *Client {
	cl := &Client{
		ID: c.ID, Name: c.Name, Public: c.Public, FirstParty: c.FirstParty, Refresh: c.RefreshTokens,
		Redirects: strings.Fields(c.RedirectURIs), PostLogouts: strings.Fields(c.PostLogoutRedirectURIs),
		Scopes: strings.Fields(c.Scopes), set: set,
	}
	cl.secretHash, _ = hex.DecodeString(c.SecretHash)
	if c.PreviousSecretUntil != nil {
		cl.previousHash, _ = hex.DecodeString(c.PreviousSecretHash)
		cl.previousUntil = *c.PreviousSecretUntil
	}
	if len(cl.Scopes) == 0 {
		cl.Scopes = config.OpenIDScopes
	}
	return cl
}

// DisplayName is the name the consent page shows: the name, or the id.
func (c *Client) DisplayName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// checkSecret compares in constant time; a public client has none to
// check. A stored client's previous secret is compared too, whatever the
// current one's result, and counts only before its end (now).
func (c *Client) checkSecret(secret string, now time.Time) bool {
	if c.Public || secret == "" {
		return false
	}
	if c.secret != "" {
		a, b := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(c.secret))
		return subtle.ConstantTimeCompare(a[:], b[:]) == 1
	}
	sum := sha256.Sum256([]byte(secret))
	current := hashMatches(sum, c.secretHash)
	previous := hashMatches(sum, c.previousHash)
	if !now.Before(c.previousUntil) { // over, or none (the zero time)
		previous = 0
	}
	return current|previous == 1
}

// previousSecretUntil is when the previous secret stops being accepted,
// zero when it is not at now (none, damaged, or over), as checkSecret
// counts it.
func (c *Client) previousSecretUntil(now time.Time) time.Time {
	if len(c.previousHash) != sha256.Size || !now.Before(c.previousUntil) {
		return time.Time{}
	}
	return c.previousUntil
}

// hashMatches is 1 when hash is sum, in constant time; 0 for a hash that
// is not a SHA-256 (none, or a damaged row): it fails closed.
func hashMatches(sum [sha256.Size]byte, hash []byte) int {
	if len(hash) != sha256.Size {
		return 0
	}
	return subtle.ConstantTimeCompare(sum[:], hash)
}

// errUnknownClient is why a client is unknown; client returns it inside
// an invalid_client (errUnknownClientAnswer), since the library turns a
// plain error into a 500 server_error at the refresh grant and at
// end_session (it answers invalid_request at /authorize either way).
var errUnknownClient = errors.New("openid: unknown client")

// errUnknownClientAnswer is an unknown client's answer: the description
// of a wrong secret's, so the answer does not tell which client ids
// exist.
func errUnknownClientAnswer() *oidc.Error {
	return oidc.ErrInvalidClient().WithDescription("invalid client_id / client_secret").WithParent(errUnknownClient)
}

// client finds a client: config.yaml's first, then the stored ones.
func (s *Service) client(ctx context.Context, id string) (*Client, error) {
	if c, ok := s.static[id]; ok {
		return c, nil
	}
	row, err := s.store.Client(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, errUnknownClientAnswer()
	}
	if err != nil {
		return nil, oidc.ErrServerError().WithParent(err)
	}
	return storedClient(row, &s.set), nil
}

// The op.Client interface.

func (c *Client) GetID() string                    { return c.ID }
func (c *Client) RedirectURIs() []string           { return c.Redirects }
func (c *Client) PostLogoutRedirectURIs() []string { return c.PostLogouts }
func (c *Client) ApplicationType() op.ApplicationType {
	if c.native() {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}
func (c *Client) AuthMethod() oidc.AuthMethod {
	if c.Public {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic // client_secret_post is accepted too (op.Config.AuthMethodPost)
}
func (c *Client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *Client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
func (c *Client) LoginURL(id string) string            { return c.set.LoginURL(id) }
func (c *Client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (c *Client) IDTokenLifetime() time.Duration       { return c.set.IDTTL }
func (c *Client) ClockSkew() time.Duration             { return 0 }
func (c *Client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *Client) IsScopeAllowed(scope string) bool     { return slices.Contains(c.Scopes, scope) }

// native: a client with a private-use scheme redirect URI (RFC 8252
// §7.1: com.example.app:/cb) is a native app. The library refuses such a
// URI from any other type of client, though config and `clients add`
// accept it; as a native app's, its loopback redirect URIs also match on
// any port (§7.3).
func (c *Client) native() bool {
	return slices.ContainsFunc(c.Redirects, func(u string) bool {
		scheme, _, ok := strings.Cut(u, ":")
		scheme = strings.ToLower(scheme)
		return ok && scheme != "http" && scheme != "https"
	})
}

// redirectRegistered reports whether uri is one of the client's redirect
// URIs, exactly, or — a native app's loopback URI — one that differs only
// in its port (RFC 8252 §7.3). The library's own match for a native app
// compares only the path and query of loopback URIs, so any loopback
// address, localhost, https or a user part got the code too.
func (c *Client) redirectRegistered(uri string) bool { return c.registered(c.Redirects, uri) }

// postLogoutRegistered is redirectRegistered's rule for the client's
// post-logout redirect URIs, which the library matches as loosely.
func (c *Client) postLogoutRegistered(uri string) bool { return c.registered(c.PostLogouts, uri) }

// registered reports whether uri is in list, exactly, or differs from a
// loopback URI of it in its port only, for a native app.
func (c *Client) registered(list []string, uri string) bool {
	if slices.Contains(list, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || !c.native() || u.Scheme != "http" || u.User != nil || strings.Contains(uri, "#") {
		return false
	}
	return slices.ContainsFunc(list, func(r string) bool {
		reg, err := url.Parse(r)
		return err == nil && reg.Scheme == "http" && loopbackHost(reg.Hostname()) &&
			reg.Hostname() == u.Hostname() && reg.Path == u.Path && reg.RawQuery == u.RawQuery
	})
}

// loopbackHost: localhost or a loopback IP literal, the hosts whose port
// a native app picks when it runs (as the library counts them).
func loopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// DevMode lets http redirect URIs through the library's check: config and
// `clients add` accept http only for loopback hosts, and matching stays exact.
func (c *Client) DevMode() bool { return true }

func (c *Client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *Client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
