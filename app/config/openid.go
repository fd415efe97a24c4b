package config

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// OpenID is the OpenID Provider: latchkey signs users into other
// applications (its clients) with OpenID Connect (docs/openid-provider.md).
type OpenID struct {
	Enabled bool `yaml:"enabled"`
	// SigningAlgorithm signs ID tokens: RS256 (default; every client
	// supports it) or ES256. Keys of both are always published.
	SigningAlgorithm     string   `yaml:"signing_algorithm"`
	AccessTokenLifetime  Duration `yaml:"access_token_lifetime"`
	IDTokenLifetime      Duration `yaml:"id_token_lifetime"`
	RefreshTokenLifetime Duration `yaml:"refresh_token_lifetime"`
	// KeyPublishLead is how long a key made by `latchkey oidc rotate-keys`
	// is published before it signs, so clients that cache the key set
	// have it first.
	KeyPublishLead Duration       `yaml:"key_publish_lead"`
	Clients        []OpenIDClient `yaml:"clients"`
	// AuthorizeLimit bounds the authorization requests one client may
	// have the provider store: anyone can send one, unauthenticated, and
	// each is a row kept until it expires.
	AuthorizeLimit AuthorizeLimit `yaml:"authorize_limit"`
}

// AuthorizeLimit is how many authorization requests are stored per
// Window from one client (an IPv4 address or an IPv6 /64) and from one
// network (its IPv6 /48 or IPv4 /24); zero values take the defaults
// (app/email's ClientLimits: 600 and 5 x per_ip per 10 minutes). The
// counters live in the database, as the e-mail limits' do.
type AuthorizeLimit struct {
	Disabled   bool     `yaml:"disabled"`
	PerIP      int      `yaml:"per_ip"`
	PerNetwork int      `yaml:"per_network"`
	Window     Duration `yaml:"window"`
}

// OpenIDClient is an application that signs its users in through latchkey.
type OpenIDClient struct {
	ID   string `yaml:"id"`
	Name string `yaml:"name"`
	// Secret (usually "${ENV_VAR}") or SecretHash ("sha256:" and the hex
	// SHA-256 of a secret of 32+ characters) for a confidential client;
	// neither for a public one.
	Secret                 string   `yaml:"secret"`
	SecretHash             string   `yaml:"secret_hash"`
	Public                 bool     `yaml:"public"`
	RedirectURIs           []string `yaml:"redirect_uris"`
	PostLogoutRedirectURIs []string `yaml:"post_logout_redirect_uris"`
	// Scopes the client may ask for (default: every scope latchkey has).
	Scopes []string `yaml:"scopes"`
	// FirstParty clients skip the consent page.
	FirstParty bool `yaml:"first_party"`
	// RefreshTokens issues refresh tokens without the offline_access scope.
	RefreshTokens bool `yaml:"refresh_tokens"`
}

// OpenIDScopes are the scopes latchkey knows, in the order the consent
// page lists them.
var OpenIDScopes = []string{"openid", "profile", "email", "groups", "offline_access"}

// defaultOpenID: short-lived access and ID tokens, refresh tokens of a
// month (rotated at each use), a key published an hour before it signs.
func defaultOpenID() OpenID {
	return OpenID{
		SigningAlgorithm:     "RS256",
		AccessTokenLifetime:  Duration(time.Hour),
		IDTokenLifetime:      Duration(time.Hour),
		RefreshTokenLifetime: Duration(30 * 24 * time.Hour),
		KeyPublishLead:       Duration(time.Hour),
	}
}

// clientID: what appears in URLs and logs without escaping.
var clientID = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,64}$`)

// validateOpenID reports every problem of the provider's settings and
// clients at once.
func (c *Config) validateOpenID(add func(string, ...any)) {
	o := c.OpenID
	if o.SigningAlgorithm != "RS256" && o.SigningAlgorithm != "ES256" {
		add("oidc.signing_algorithm: %q must be RS256 or ES256", o.SigningAlgorithm)
	}
	for name, d := range map[string]Duration{"access_token_lifetime": o.AccessTokenLifetime, "id_token_lifetime": o.IDTokenLifetime, "refresh_token_lifetime": o.RefreshTokenLifetime} {
		if d.D() < time.Minute {
			add("oidc.%s: %v is shorter than a minute", name, d.D())
		}
	}
	if o.KeyPublishLead < 0 {
		add("oidc.key_publish_lead: must not be negative")
	}
	if l := o.AuthorizeLimit; l.PerIP < 0 || l.PerNetwork < 0 || l.Window < 0 {
		add("oidc.authorize_limit: per_ip, per_network and window must not be negative (0 means the default)")
	}
	seen := map[string]bool{}
	for i, cl := range o.Clients {
		at := fmt.Sprintf("oidc.clients[%d] (%s)", i, cl.ID)
		if !clientID.MatchString(cl.ID) {
			add("%s: id must be 1-64 letters, digits or ._~-", at)
		}
		if seen[cl.ID] {
			add("%s: id used twice", at)
		}
		seen[cl.ID] = true
		switch {
		case cl.Public && (cl.Secret != "" || cl.SecretHash != ""):
			add("%s: a public client has no secret (it proves itself with PKCE)", at)
		case !cl.Public && cl.Secret == "" && cl.SecretHash == "":
			add("%s: a confidential client needs secret (e.g. ${MY_CLIENT_SECRET}) or secret_hash; or set public: true", at)
		case cl.Secret != "" && cl.SecretHash != "":
			add("%s: give secret or secret_hash, not both", at)
		case cl.Secret != "" && len(cl.Secret) < 32:
			add("%s: secret too short (%d characters); use at least 32", at, len(cl.Secret))
		case cl.SecretHash != "" && !validSecretHash(cl.SecretHash):
			add("%s: secret_hash must be sha256: and 64 hex digits (`latchkey clients hash-secret`)", at)
		}
		if len(cl.RedirectURIs) == 0 {
			add("%s: redirect_uris: at least one", at)
		}
		for _, u := range cl.RedirectURIs {
			if p := redirectURIProblem(u); p != "" {
				add("%s: redirect_uris: %q %s", at, u, p)
			}
		}
		for _, u := range cl.PostLogoutRedirectURIs {
			if p := redirectURIProblem(u); p != "" {
				add("%s: post_logout_redirect_uris: %q %s", at, u, p)
			}
		}
		for _, s := range cl.Scopes {
			if !slices.Contains(OpenIDScopes, s) {
				add("%s: scopes: %q is not one of %s", at, s, strings.Join(OpenIDScopes, ", "))
			}
		}
	}
}

// OpenIDProblems are validateOpenID's findings, for a client added by a
// command (checked by the same rules as config.yaml's).
func (c *Config) OpenIDProblems() []string {
	var p []string
	c.validateOpenID(func(f string, a ...any) { p = append(p, fmt.Sprintf(f, a...)) })
	return p
}

func validSecretHash(h string) bool {
	hexPart, ok := strings.CutPrefix(h, "sha256:")
	b, err := hex.DecodeString(hexPart)
	return ok && err == nil && len(b) == 32
}

// RedirectURIProblem says what is wrong with a client's redirect URI ("":
// nothing): absolute, http(s) or a private-use scheme for native apps, no
// fragment; http only for loopback hosts. Matching is exact.
func RedirectURIProblem(raw string) string { return redirectURIProblem(raw) }

func redirectURIProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs():
		return "is not an absolute URI"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not have a fragment"
	case u.Scheme == "https":
		if u.Host == "" {
			return "has no host"
		}
	case u.Scheme == "http":
		h := u.Hostname()
		if h != "localhost" && h != "127.0.0.1" && h != "::1" && !strings.HasSuffix(h, ".localhost") {
			return "uses http for a host other than loopback (use https)"
		}
	case u.Scheme == "javascript" || u.Scheme == "data" || u.Scheme == "file":
		return "uses a scheme that cannot receive a code"
	}
	return ""
}
