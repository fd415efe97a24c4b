// Package config holds latchkey's configuration: one struct, filled from
// defaults, then a YAML file, then the environment, and validated all at once.
package config

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is everything an operator can set. Field tags are the config.yaml keys.
type Config struct {
	// ServiceURL is the public URL of the base path (SERVICE_URL, AUTH_URL, NEXTAUTH_URL).
	ServiceURL string `yaml:"service_url"`
	// Secret signs CSRF cookies and derives JWT keys (AUTH_SECRET, NEXTAUTH_SECRET, AUTH_SECRET_FILE).
	Secret string `yaml:"secret"`
	// RotationSecrets are AUTH_SECRET_3, _2, _1 (those set, in that order):
	// the first of them signs everything new, and all are accepted. See Secrets.
	RotationSecrets []string `yaml:"-"`
	// Port is the listening port (PORT).
	Port int `yaml:"port"`
	// Listen is the address the service listens on, with Port (LISTEN):
	// an IP address or host name, e.g. 127.0.0.1 behind a proxy on the
	// same host. Empty: every interface. See ListenAddr.
	Listen string `yaml:"listen"`
	// DataDir holds the default SQLite file and the generated secret.
	DataDir string `yaml:"data_dir"`
	// DatabaseURL is a SQLite file path or sqlite:// / file: URL (DATABASE_URL).
	DatabaseURL string `yaml:"database_url"`
	// Database tunes the connection pool (PostgreSQL mostly).
	Database Database `yaml:"database"`

	Providers []Provider `yaml:"providers"`
	Session   Session    `yaml:"session"`
	Cookies   Cookies    `yaml:"cookies"`
	Pages     Pages      `yaml:"pages"`
	Callbacks Callbacks  `yaml:"callbacks"`
	// AllowedRedirectOrigins lists extra origins (scheme://host[:port]) a callbackUrl may point to.
	AllowedRedirectOrigins []string `yaml:"allowed_redirect_origins"`
	// TrustedProxies are CIDRs of reverse proxies whose X-Forwarded-For is
	// believed when finding a client's IP (for rate limits). Empty: the
	// peer address is the client.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// MaxBodyBytes caps request bodies; larger ones get 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// Server bounds the connections the listener holds.
	Server Server `yaml:"server"`
	// HSTS is the Strict-Transport-Security header under https (hsts.go).
	HSTS HSTS `yaml:"hsts"`
	// Metrics is the Prometheus endpoint, off unless configured (METRICS_ADDR).
	Metrics Metrics `yaml:"metrics"`
	// Log is the log format (LOG_FORMAT) and the access log.
	Log Log `yaml:"log"`
	// Access narrows who passes forward-auth per protected host
	// (app/forwardauth); empty: every signed-in user.
	Access []AccessRule `yaml:"access"`
	// Groups gives users groups by verified e-mail domain (groups.go).
	Groups Groups `yaml:"groups"`
	// Theme brands the built-in pages and the sign-in e-mail (theme.go).
	Theme Theme `yaml:"theme"`
	// I18n picks the pages' languages (i18n.go).
	I18n I18n `yaml:"i18n"`
	// TwoFactor is the second sign-in step (two_factor.go).
	TwoFactor TwoFactor `yaml:"two_factor"`
	// Account is the account page (account.go).
	Account Account `yaml:"account"`
	// OpenID is the OpenID Provider (openid.go).
	OpenID OpenID `yaml:"oidc"`
	// Webhooks are signed calls to other services on account events
	// (webhooks.go).
	Webhooks Webhooks `yaml:"webhooks"`
	// Tokens is the provider-token endpoint (tokens.go).
	Tokens Tokens `yaml:"tokens"`

	// SecretGenerated is set by Load when the secret came from the data folder, not the operator.
	SecretGenerated bool `yaml:"-"`
}

// Provider is one sign-in method. Type is "oauth" (a goth catalogue id, the
// default), "oidc" (generic OpenID Connect by discovery), "email",
// "webauthn" (passkeys) or "credentials" (e-mail and password).
type Provider struct {
	ID           string            `yaml:"id"`
	Type         string            `yaml:"type"`
	Name         string            `yaml:"name"`
	ClientID     string            `yaml:"client_id"`
	ClientSecret string            `yaml:"client_secret"`
	Issuer       string            `yaml:"issuer"`
	Scopes       []string          `yaml:"scopes"`
	Extra        map[string]string `yaml:"extra"`
	// AuthorizationParams are added to every authorization request (prompt, hd, ...).
	AuthorizationParams map[string]string `yaml:"authorization_params"`
	// AllowDangerousEmailAccountLinking links an OAuth identity to an existing user with the same e-mail.
	AllowDangerousEmailAccountLinking bool `yaml:"allow_dangerous_email_account_linking"`
	// TrustEmail marks every e-mail of this OAuth or OIDC provider verified,
	// for operators who know the provider checks addresses although it does
	// not say so. Where users or tenant admins can set any address, that
	// lets them claim any user with that address.
	TrustEmail bool `yaml:"trust_email"`
	// StoreTokens keeps the provider's access and refresh tokens, encrypted,
	// for GET {base}/token/:provider (docs/provider-tokens.md). Off, no
	// token of this provider is kept at all.
	StoreTokens bool `yaml:"store_tokens"`

	// E-mail provider settings.
	Server    string    `yaml:"server"`
	From      string    `yaml:"from"`
	MaxAge    Duration  `yaml:"max_age"`
	Confirm   bool      `yaml:"confirm"`
	RateLimit RateLimit `yaml:"rate_limit"`

	// Passkey (type: webauthn) provider settings: see Passkey.
	Passkey `yaml:",inline"`
	// Credentials (password) provider settings; see credentials.go.
	// Signup offers the sign-up page; nil means true (SignupEnabled).
	Signup *bool `yaml:"signup"`
}

// RateLimit bounds the sign-in e-mails one provider sends per window. A
// client is an IPv4 address or an IPv6 /64; zero values take the defaults
// documented in config.yaml (app/email applies them). The counters live in
// the database, so every instance on it shares them.
type RateLimit struct {
	Disabled bool `yaml:"disabled"`
	// PerAddress is per (address, client): a stranger's requests from
	// elsewhere do not use up the owner's own allowance.
	PerAddress int `yaml:"per_address"`
	// PerAddressCeiling is per address from all clients together: it caps
	// how many e-mails one inbox can be sent.
	PerAddressCeiling int `yaml:"per_address_ceiling"`
	PerIP             int `yaml:"per_ip"`
	// PerNetwork is per IPv6 /48, one site's usual allocation.
	PerNetwork int `yaml:"per_network"`
	// PerIPv4Network is per IPv4 /24: a client holding many addresses of
	// one block does not get an allowance for each.
	PerIPv4Network int `yaml:"per_ipv4_network"`
	// Global is every e-mail of the provider to an address that is no
	// existing user's verified one, whoever asks: an owner's sign-in and
	// reset e-mails are never refused by it.
	Global int      `yaml:"global"`
	Window Duration `yaml:"window"`
	// MaxKeys bounded the in-memory tables of counters, which the database
	// has replaced; still read so that existing files load, and ignored
	// (Validate warns).
	MaxKeys int `yaml:"max_keys"`
}

// Server bounds connections, so that clients holding many of them open
// cannot use up the process's file descriptors.
type Server struct {
	// MaxConnections caps concurrent connections; one more waits in the
	// kernel's accept queue until another closes.
	MaxConnections int `yaml:"max_connections"`
	// IdleTimeout closes a keep-alive connection that has waited this long
	// for its next request.
	IdleTimeout Duration `yaml:"idle_timeout"`
}

// Database is the connection pool and statement limits. Zero means the
// default: for PostgreSQL 20 open, all of them kept idle, closed after 5 min
// unused or 30 min open, 10 s per statement.
type Database struct {
	MaxOpen          int      `yaml:"max_open"`
	MaxIdle          int      `yaml:"max_idle"`
	ConnMaxLifetime  Duration `yaml:"conn_max_lifetime"`
	ConnMaxIdleTime  Duration `yaml:"conn_max_idle_time"`
	StatementTimeout Duration `yaml:"statement_timeout"`
	// StartupWait is how long a starting instance (and `latchkey
	// migrate`) keeps trying a PostgreSQL that does not answer or has no
	// writable primary (a fail-over, a database started after latchkey)
	// before it gives up; 0 gives up at once. A refused login or a schema
	// from a newer latchkey gives up at once whatever it says.
	StartupWait Duration `yaml:"startup_wait"`
}

// Session selects where sessions live and how long they last.
type Session struct {
	Strategy  string   `yaml:"strategy"`
	MaxAge    Duration `yaml:"max_age"`
	UpdateAge Duration `yaml:"update_age"`
	// AbsoluteMaxAge ends every session this long after its sign-in,
	// however active it stays: sliding expiry never reaches past it. 0 turns
	// it off (next-auth's behaviour: an active session never ends).
	AbsoluteMaxAge Duration `yaml:"absolute_max_age"`
	// RevocationPoll is how often each instance reads the revocations of
	// `latchkey sessions revoke` and `users delete`: a revoked session
	// (jwt included) ends on every instance within this time. 0 means 1s.
	RevocationPoll Duration `yaml:"revocation_poll"`
	// CacheTTL is how long an instance may answer a database session from
	// memory instead of a query: a session ended elsewhere (another
	// instance, `latchkey sessions revoke`) ends here within it; one ended
	// on this instance ends at once. 0 turns the cache off.
	CacheTTL Duration `yaml:"cache_ttl"`
	// OutageGrace is how long a database session this instance read lately
	// keeps answering GET /session and forward-auth while no writable
	// database answers (a fail-over; docs/high-availability.md): the copy
	// the lookup cache kept, up to this old, instead of a 503. Needs the
	// cache (cache_ttl above 0); 0 turns it off.
	OutageGrace Duration `yaml:"outage_grace"`
}

// Cookies selects cookie names: "next-auth" (v4) or "authjs" (v5, with v5 JWTs).
type Cookies struct {
	Style string `yaml:"style"`
	// Domain, when set (e.g. example.com), is the session cookie's Domain
	// attribute, so sibling hosts protected by forward-auth share the
	// sign-in. Empty: host-only, as next-auth.
	Domain string `yaml:"domain"`
}

// Pages are optional custom pages, as next-auth's `pages` option.
type Pages struct {
	SignIn        string `yaml:"sign_in"`
	SignOut       string `yaml:"sign_out"`
	Error         string `yaml:"error"`
	VerifyRequest string `yaml:"verify_request"`
	NewUser       string `yaml:"new_user"`
}

// Callbacks are the most requested knobs of next-auth's callbacks.
type Callbacks struct {
	// ExposeUserID adds user.id to the session object (off by default, as in next-auth).
	ExposeUserID bool `yaml:"expose_user_id"`
	// AllowedEmailDomains, when set, denies sign-in (AccessDenied) to other e-mail domains.
	AllowedEmailDomains []string `yaml:"allowed_email_domains"`
}

// Provider types.
const (
	TypeOAuth = "oauth"
	TypeOIDC  = "oidc"
	TypeEmail = "email"
	// TypeWebAuthn is passkeys (webauthn.go).
	TypeWebAuthn = "webauthn"
)

// Session strategies and cookie styles.
const (
	StrategyDatabase = "database"
	StrategyJWT      = "jwt"
	StyleNextAuth    = "next-auth"
	StyleAuthJS      = "authjs"
)

// Duration is a time.Duration that reads "720h", "30m" or "30d" from YAML.
type Duration time.Duration

// UnmarshalYAML accepts Go durations plus a whole-day "d" suffix. A bad
// value is a *yaml.TypeError, so decoding goes on and reports the rest too.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*d = Duration(v)
	return nil
}

// ParseDuration parses a Go duration or a number of days such as "30d".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err == nil && fmt.Sprint(n) == days {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use e.g. 720h, 30m or 30d)", s)
	}
	return v, nil
}

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
