package openid

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/config/weborigin"
	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// NewClient is what `latchkey clients add` asks for.
type NewClient struct {
	ID, Name               string
	Public, FirstParty     bool
	RefreshTokens          bool
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	Scopes                 []string
}

// ErrConfigClient: a client of config.yaml is changed there, not by a
// command.
var ErrConfigClient = errors.New("this client is defined in config.yaml; change it there")

// AddClient stores a client and returns its secret ("" for a public
// client), shown once: only its SHA-256 is kept.
func (s *Service) AddClient(ctx context.Context, n NewClient) (string, error) {
	cfg := config.Defaults() // the client's own checks; the provider's settings are config.yaml's
	// Hosts in ASCII, as config.yaml's (Config.Normalize).
	n.RedirectURIs, n.PostLogoutRedirectURIs = asciiHostURLs(n.RedirectURIs), asciiHostURLs(n.PostLogoutRedirectURIs)
	secret := ""
	if !n.Public {
		secret = NewClientSecret()
	}
	cfg.OpenID.Clients = []config.OpenIDClient{{ID: n.ID, Name: n.Name, Secret: secret, Public: n.Public,
		RedirectURIs: n.RedirectURIs, PostLogoutRedirectURIs: n.PostLogoutRedirectURIs, Scopes: n.Scopes}}
	if p := cfg.OpenIDProblems(); len(p) > 0 {
		return "", fmt.Errorf("add client: %s", strings.Join(p, "; "))
	}
	if _, ok := s.static[n.ID]; ok {
		return "", fmt.Errorf("add client %q: %w", n.ID, ErrConfigClient)
	}
	now := s.now()
	row := &openidstore.Client{
		ID: n.ID, Name: n.Name, Public: n.Public, FirstParty: n.FirstParty, RefreshTokens: n.RefreshTokens,
		RedirectURIs: strings.Join(n.RedirectURIs, " "), PostLogoutRedirectURIs: strings.Join(n.PostLogoutRedirectURIs, " "),
		Scopes: strings.Join(n.Scopes, " "), CreatedAt: now, UpdatedAt: now,
	}
	if secret != "" {
		row.SecretHash = hashToken(secret)
	}
	if err := s.store.AddClient(ctx, row); err != nil {
		return "", fmt.Errorf("add client: %w", err)
	}
	return secret, nil
}

func asciiHostURLs(uris []string) []string {
	out := make([]string, len(uris))
	for i, u := range uris {
		out[i] = weborigin.ASCIIHostURL(u)
	}
	return out
}

// MaxKeepPrevious bounds how long a replaced client secret stays
// accepted: long enough to redeploy, short enough that a forgotten
// overlap ends.
const MaxKeepPrevious = 30 * 24 * time.Hour

// RotateSecret gives a stored confidential client a new secret (shown
// once). The one it replaces keeps working for keepPrevious (0: it stops
// at once), so that the relying parties can be redeployed with the new
// one without failing meanwhile; previousUntil is when it stops (zero
// for 0). A secret kept by an earlier rotation stops now.
func (s *Service) RotateSecret(ctx context.Context, id string, keepPrevious time.Duration) (secret string, previousUntil time.Time, err error) {
	if keepPrevious < 0 || keepPrevious > MaxKeepPrevious {
		return "", time.Time{}, fmt.Errorf("rotate secret of %q: keep the previous secret from 0 to %s, not %s", id, MaxKeepPrevious, keepPrevious)
	}
	if _, ok := s.static[id]; ok {
		return "", time.Time{}, fmt.Errorf("rotate secret of %q: %w", id, ErrConfigClient)
	}
	c, err := s.store.Client(ctx, id)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("rotate secret of %q: %w", id, err)
	}
	if c.Public {
		return "", time.Time{}, fmt.Errorf("rotate secret of %q: a public client has no secret", id)
	}
	now := s.now()
	if keepPrevious > 0 {
		previousUntil = now.Add(keepPrevious)
	}
	secret = NewClientSecret()
	ok, err := s.store.RotateClientSecret(ctx, id, hashToken(secret), previousUntil, now)
	if err != nil || !ok {
		return "", time.Time{}, fmt.Errorf("rotate secret of %q: %w", id, errors.Join(err, ErrNotFound))
	}
	return secret, previousUntil, nil
}

// EndPreviousSecret stops at once the previous secret a rotation of the
// stored client id kept (the relying parties are all redeployed, or it
// leaked); until is when it would have stopped, zero when none was in
// force (nothing changed).
func (s *Service) EndPreviousSecret(ctx context.Context, id string) (until time.Time, err error) {
	if _, ok := s.static[id]; ok {
		return time.Time{}, fmt.Errorf("end previous secret of %q: %w", id, ErrConfigClient)
	}
	c, err := s.store.Client(ctx, id)
	if err != nil {
		return time.Time{}, fmt.Errorf("end previous secret of %q: %w", id, err)
	}
	now := s.now()
	until = storedClient(c, &s.set).previousSecretUntil(now)
	if until.IsZero() {
		return time.Time{}, nil
	}
	ok, err := s.store.EndPreviousSecret(ctx, id, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("end previous secret of %q: %w", id, err)
	}
	if !ok { // a rotation or a removal ran meanwhile
		return time.Time{}, nil
	}
	return until, nil
}

// RemoveClient deletes a stored client with its consents and tokens.
func (s *Service) RemoveClient(ctx context.Context, id string) error {
	if _, ok := s.static[id]; ok {
		return fmt.Errorf("remove %q: %w", id, ErrConfigClient)
	}
	ok, err := s.store.RemoveClient(ctx, id)
	if err != nil {
		return fmt.Errorf("remove client %q: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("remove client %q: %w", id, ErrNotFound)
	}
	return nil
}

// ClientInfo is a client as `latchkey clients list` shows it.
type ClientInfo struct {
	*Client
	FromConfig bool
	// PreviousSecretUntil is when the previous secret a rotation kept
	// stops working; zero when none is in force.
	PreviousSecretUntil time.Time
}

// Clients lists config.yaml's clients, then the stored ones.
func (s *Service) Clients(ctx context.Context) ([]ClientInfo, error) {
	var out []ClientInfo
	for _, c := range s.set.Clients {
		out = append(out, ClientInfo{Client: s.static[c.ID], FromConfig: true})
	}
	rows, err := s.store.Clients(ctx)
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	now := s.now()
	for i := range rows {
		if _, ok := s.static[rows[i].ID]; !ok {
			c := storedClient(&rows[i], &s.set)
			out = append(out, ClientInfo{Client: c, PreviousSecretUntil: c.previousSecretUntil(now)})
		}
	}
	return out, nil
}

// Consented lists the applications the user allowed, for the account page.
func (s *Service) Consented(ctx context.Context, userID string) ([]App, error) {
	rows, err := s.store.Consents(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("list consents: %w", err)
	}
	out := make([]App, 0, len(rows))
	for _, r := range rows {
		out = append(out, App{ClientID: r.ClientID, Name: s.ClientName(ctx, r.ClientID), Scopes: strings.Fields(r.Scopes), Since: r.CreatedAt})
	}
	return out, nil
}

// ClientName is how pages name a client: its name, else its id (also for
// a client that is gone or cannot be read).
func (s *Service) ClientName(ctx context.Context, id string) string {
	if c, err := s.client(ctx, id); err == nil {
		return c.DisplayName()
	}
	return id
}

// RevokeApp forgets the user's consent to the client and revokes its
// tokens; false, and nothing revoked, when there was none (a first-party
// client's tokens: the user signs out of it, not revokes it).
func (s *Service) RevokeApp(ctx context.Context, userID, clientID string) (bool, error) {
	ok, err := s.store.DeleteConsent(ctx, userID, clientID, s.now())
	if err != nil {
		return false, fmt.Errorf("revoke app: %w", err)
	}
	return ok, nil
}

// NewClientSecret is 256 random bits, base64url.
func NewClientSecret() string { return random.Base64URL(32) }

// HashSecret is a client secret's secret_hash for config.yaml.
func HashSecret(secret string) string { return "sha256:" + hashToken(secret) }

// Purge deletes expired requests and tokens and keys no longer published.
func (s *Service) Purge(ctx context.Context) (int64, error) { return s.store.Purge(ctx, s.now()) }
