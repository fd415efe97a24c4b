// Package openid is the rules of latchkey's OpenID Provider: which
// clients exist and how they prove themselves, what a user consented to,
// the signing keys and their rotation, the tokens (a code's exchange
// starts a family; refresh tokens rotate at each use and a reused one
// revokes its family), and the claims a client may read. Service
// implements zitadel/oidc's op.Storage, so the OP library does the
// protocol (parsing, PKCE, client authentication, signing) and this
// package decides; the handler (app/openidprovider) mounts the library
// and latchkey's own pages. Everything lives in the database (Store), so
// any instance can serve any step.
package openid

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// Groups are a user's groups (app/groups), for the groups claim.
type Groups interface {
	Of(ctx context.Context, userID string, verifiedEmail *string) ([]string, error)
}

// Settings are the provider's configuration, derived once.
type Settings struct {
	// Algorithm signs ID tokens: RS256 or ES256.
	Algorithm                                         string
	AccessTTL, IDTTL, RefreshTTL, RequestTTL, KeyLead time.Duration
	// LoginURL is latchkey's page that takes over an authorization request
	// (the user signs in, consents), given the request's id.
	LoginURL func(requestID string) string
	// LogoutURL is latchkey's page that ends the session at an
	// application's request, given the sealed request (logout.go).
	LogoutURL func(sealed string) string
	// Clients are the clients of config.yaml (admin-added ones are stored).
	Clients []config.OpenIDClient
	// Origin is SERVICE_URL's origin (scheme://host[:port]): an image
	// stored as a path on it ("/uploads/x.png", an imported user's) goes
	// into the picture claim made absolute on it.
	Origin string
	// Limits bound the authorization requests stored per client (nil:
	// none); the handler puts the client's address in the request's
	// context (WithClientIP).
	Limits RequestLimiter
}

// Service is the OpenID Provider's rules; build it with New.
type Service struct {
	store  Store
	groups Groups
	set    Settings
	keys   *keyRing
	logout logoutSealer
	uris   clientURIs
	static map[string]*Client
	now    func() time.Time
	log    *slog.Logger
	// standIn is the stored client an unknown client id's secret is
	// compared with (AuthorizeClientIDSecret): no secret matches its hash.
	standIn openidstore.Client
}

// New builds the rules: the config's clients, and the key ring whose
// private keys are sealed under every secret (the first seals).
func New(store Store, groups Groups, set Settings, secrets []string, now func() time.Time, log *slog.Logger) (*Service, error) {
	if set.RequestTTL == 0 {
		set.RequestTTL = 10 * time.Minute
	}
	codecs, err := cookies.SealedCodecs(secrets, "latchkey OpenID signing key", 0)
	if err != nil {
		return nil, fmt.Errorf("openid: %w", err)
	}
	for _, c := range codecs {
		c.(*securecookie.SecureCookie).MaxLength(0) // an RSA key is longer than a cookie
	}
	s := &Service{store: store, groups: groups, set: set, now: now, log: log, static: map[string]*Client{},
		standIn: openidstore.Client{SecretHash: hashToken(NewClientSecret()), RedirectURIs: "https://client.invalid/cb"}}
	if s.logout.codecs, err = cookies.SealedCodecs(secrets, "latchkey OpenID logout", LogoutTTL); err != nil {
		return nil, fmt.Errorf("openid: %w", err)
	}
	s.keys = newKeyRing(store, codecs, set.Algorithm, now)
	for _, c := range set.Clients {
		s.static[c.ID] = configClient(c, set)
	}
	return s, nil
}
