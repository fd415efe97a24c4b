package config

import (
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/app/config/weborigin"
	"github.com/latchkey-auth/latchkey/app/email"
)

// Catalogue answers whether an OAuth provider id exists and which extra
// fields it needs. The goth catalogue implements it; config does not import it.
type Catalogue func(id string) (extra []string, ok bool)

// Problems is every validation failure at once, one per line.
type Problems []string

func (p Problems) Error() string { return strings.Join(p, "\n") }

var providerID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Validate checks the whole configuration and returns every problem (as
// Problems) and warnings that do not prevent start-up.
func (c *Config) Validate(known Catalogue) (warnings []string, err error) {
	var p Problems
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }

	if _, err := ParseBase(c.ServiceURL); err != nil {
		add("service_url: %v", err)
	}
	if c.Port < 1 || c.Port > 65535 {
		add("port: %d is not a TCP port", c.Port)
	}
	c.validateListen(add)
	if c.Secret != "" && len(c.Secret) < 32 {
		add("secret: too short (%d characters); use at least 32, e.g. `openssl rand -hex 32`", len(c.Secret))
	}
	for i, s := range c.RotationSecrets {
		if len(s) < 32 {
			add("rotation secret %d of %d (AUTH_SECRET_1..3): too short (%d characters); use at least 32", i+1, len(c.RotationSecrets), len(s))
		}
	}
	if base, err := ParseBase(c.ServiceURL); err == nil && base.Secure && len(c.Secrets()) == 0 {
		// An https deployment is production, where a secret generated into
		// the data folder goes wrong: several instances, or one whose disk
		// does not survive a restart, would each sign with their own and
		// reject each other's cookies and sessions.
		add("secret: required when the service URL is https (a generated secret belongs to one data folder, so several instances or an ephemeral disk would each have their own): set AUTH_SECRET, AUTH_SECRET_FILE or secret: to 32+ random characters, e.g. `openssl rand -hex 32`")
	}
	if c.IsPostgres() {
		if err := c.postgresProblem(); err != nil {
			add("database_url (DATABASE_URL) %q: %v", c.RedactedDatabaseURL(), err)
		} else {
			warnings = append(warnings, c.postgresWarnings()...)
		}
	} else if _, err := c.databasePath(); err != nil {
		add("database_url (DATABASE_URL) %q: %v", c.RedactedDatabaseURL(), err)
	}
	d := c.Database
	if d.MaxOpen < 0 || d.MaxIdle < 0 || d.ConnMaxLifetime < 0 || d.ConnMaxIdleTime < 0 || d.StatementTimeout < 0 || d.StartupWait < 0 {
		add("database: max_open, max_idle, conn_max_lifetime, conn_max_idle_time, statement_timeout and startup_wait must not be negative")
	}
	if d.MaxOpen > 0 && d.MaxIdle > d.MaxOpen {
		add("database.max_idle (%d) must not exceed database.max_open (%d)", d.MaxIdle, d.MaxOpen)
	}
	if c.MaxBodyBytes < 1024 {
		add("max_body_bytes: %d is too small (minimum 1024)", c.MaxBodyBytes)
	}
	if c.Server.MaxConnections < 1 {
		add("server.max_connections: %d must be at least 1", c.Server.MaxConnections)
	}
	if c.Server.IdleTimeout <= 0 {
		add("server.idle_timeout: must be positive, e.g. 75s")
	}
	switch c.Session.Strategy {
	case StrategyDatabase, StrategyJWT:
	default:
		add("session.strategy: %q must be %q or %q", c.Session.Strategy, StrategyDatabase, StrategyJWT)
	}
	if c.Session.MaxAge <= 0 {
		add("session.max_age: must be positive")
	}
	if c.Session.UpdateAge < 0 || c.Session.UpdateAge > c.Session.MaxAge {
		add("session.update_age: must be between 0 and session.max_age")
	}
	// Shorter than max_age, the absolute limit would silently override the
	// idle one on every session; the operator should lower max_age instead.
	if a := c.Session.AbsoluteMaxAge; a < 0 || (a > 0 && a < c.Session.MaxAge) {
		add("session.absolute_max_age: must be 0 (no limit) or at least session.max_age (%s)", c.Session.MaxAge.D())
	}
	if p := c.Session.RevocationPoll.D(); p != 0 && (p < 100*time.Millisecond || p > 5*time.Minute) {
		add("session.revocation_poll: %s must be between 100ms and 5m, or 0 for 1s (a revoked session ends within it)", p)
	}
	if t := c.Session.CacheTTL.D(); t < 0 || t > time.Minute {
		add("session.cache_ttl: %s must be between 0 (no cache) and 1m (a session ended on another instance ends within it)", t)
	}
	if g := c.Session.OutageGrace.D(); g < 0 || g > time.Hour {
		add("session.outage_grace: %s must be between 0 (off) and 1h (a session ended elsewhere just before a database outage may answer for this long)", g)
	}
	switch c.Cookies.Style {
	case StyleNextAuth, StyleAuthJS:
	default:
		add("cookies.style: %q must be %q or %q", c.Cookies.Style, StyleNextAuth, StyleAuthJS)
	}
	c.validateCookieDomain(add)
	c.validateAccess(add)
	c.validateGroups(add)
	for _, d := range c.Callbacks.AllowedEmailDomains {
		if !validMailDomain(strings.TrimPrefix(d, "@")) {
			add("callbacks.allowed_email_domains: %q must be a domain like example.com", d)
		}
	}
	c.validateTheme(add)
	c.validateI18n(add)
	c.validateTwoFactor(add)
	c.validateTokens(add)
	if c.OpenID.Enabled {
		c.validateOpenID(add)
	}
	for _, o := range c.AllowedRedirectOrigins {
		if _, ok := weborigin.Normal(o); !ok {
			add("allowed_redirect_origins: %q is not an origin like https://app.example.com", o)
		}
	}
	for name, v := range map[string]string{"sign_in": c.Pages.SignIn, "sign_out": c.Pages.SignOut, "error": c.Pages.Error, "verify_request": c.Pages.VerifyRequest, "new_user": c.Pages.NewUser} {
		if v != "" && ((!strings.HasPrefix(v, "/") && !isHTTPURL(v)) || strings.HasPrefix(v, "//") || strings.Contains(v, `\`)) {
			add("pages.%s: %q must be a path starting with a single / or an http(s) URL", name, v)
		}
	}
	for _, cidr := range c.TrustedProxies {
		if _, _, err := net.ParseCIDR(cidr); err != nil {
			add("trusted_proxies: %q is not a CIDR like 10.0.0.0/8 or 127.0.0.1/32", cidr)
		}
	}
	warnings = append(warnings, c.validateOperations(add)...)
	warnings = append(warnings, c.validateWebhooks(add)...)
	c.validateHSTS(add)
	seen := map[string]bool{}
	for i, pr := range c.Providers {
		where := fmt.Sprintf("providers[%d]", i)
		if pr.ID != "" {
			where += " (" + pr.ID + ")"
		}
		if !providerID.MatchString(pr.ID) {
			add("%s: id %q must be lower-case letters, digits, - or _", where, pr.ID)
		} else if seen[pr.ID] {
			add("%s: duplicate id", where)
		}
		seen[pr.ID] = true
		warnings = append(warnings, c.validateProvider(pr, where, known, add)...)
	}
	warnings = append(warnings, c.credentialsWithoutMail()...)
	warnings = append(warnings, c.themeContrastWarnings()...)
	if n := c.credentialsProviders(); n > 1 {
		add("providers: %d providers have type credentials; there can be one (all of them would check the same passwords)", n)
	}
	if len(p) > 0 {
		return warnings, p
	}
	return warnings, nil
}

func (c *Config) validateProvider(pr Provider, where string, known Catalogue, add func(string, ...any)) (warnings []string) {
	switch pr.Type {
	case "", TypeOAuth: // "" until Normalize
		extra, ok := known(pr.ID)
		if !ok {
			add("%s: %q is not a known OAuth provider (see `latchkey providers`); for your own identity provider use type: oidc with an issuer", where, pr.ID)
			return nil
		}
		for _, f := range extra {
			if pr.Extra[f] == "" {
				add("%s: extra.%s is required for this provider", where, f)
			}
		}
		requireCredentials(pr, where, add)
	case TypeOIDC:
		if !isHTTPURL(pr.Issuer) {
			add("%s: issuer %q must be an http(s) URL (the one serving /.well-known/openid-configuration; here or in AUTH_%s_ISSUER)", where, pr.Issuer, envName(pr.ID))
		}
		requireCredentials(pr, where, add)
	case TypeEmail:
		if pr.TrustEmail {
			add("%s: trust_email is for OAuth and OIDC providers; e-mail sign-in always proves the address", where)
		}
		base, _ := ParseBase(c.ServiceURL)
		if pr.Server == "" && base.Secure {
			// An https deployment is production: writing working sign-in
			// links into its logs would hand accounts to whoever reads them.
			add("%s: server is required when the service URL is https (without one, sign-in links would be written to the log): set server: smtp://... for this provider in a config file (--config FILE), or remove the provider", where)
		} else if pr.Server == "" {
			warnings = append(warnings, where+": no SMTP server configured: sign-in links are written to the log (development only)")
		} else if srv, err := email.ParseServer(pr.Server); err != nil {
			// The very parser NewSMTP uses, so that whatever passes here
			// starts; its errors show the URL with *** for the userinfo.
			add("%s: %v", where, err)
		} else if w := srv.Warning(); w != "" {
			// Printed by check-config and logged once at start-up.
			warnings = append(warnings, where+": "+w)
		}
		if pr.From != "" {
			if _, err := mail.ParseAddress(pr.From); err != nil {
				add("%s: from %q is not an e-mail address", where, pr.From)
			}
		}
		if pr.MaxAge < 0 {
			add("%s: max_age must be positive", where)
		}
		validateRateLimit(pr.RateLimit, where, add)
		if pr.RateLimit.MaxKeys > 0 {
			// Still read, so that existing files load; it bounded the
			// in-memory counters the database has replaced.
			warnings = append(warnings, where+": rate_limit.max_keys has no effect: the counters are kept in the database (table rate_limits), which holds rows only for e-mails sent and is purged hourly")
		}
	case TypeWebAuthn:
		c.validatePasskey(pr, where, add)
	case TypeCredentials:
		validateCredentials(pr, where, add)
	default:
		add("%s: type %q must be oauth, oidc, email, credentials or webauthn", where, pr.Type)
	}
	return warnings
}

// validateRateLimit refuses negative limits (zero means the default) and a
// ceiling below the per-(address, client) limit, which would hide it.
func validateRateLimit(rl RateLimit, where string, add func(string, ...any)) {
	for _, f := range []struct {
		key string
		v   int
	}{
		{"per_address", rl.PerAddress}, {"per_address_ceiling", rl.PerAddressCeiling}, {"per_ip", rl.PerIP},
		{"per_network", rl.PerNetwork}, {"per_ipv4_network", rl.PerIPv4Network}, {"global", rl.Global}, {"max_keys", rl.MaxKeys},
	} {
		if f.v < 0 {
			add("%s: rate_limit.%s must not be negative (0 means the default)", where, f.key)
		}
	}
	if rl.Window < 0 {
		add("%s: rate_limit.window must not be negative (0 means the default)", where)
	}
	if rl.PerAddressCeiling > 0 && rl.PerAddressCeiling < rl.PerAddress {
		add("%s: rate_limit.per_address_ceiling (%d) is below per_address (%d)", where, rl.PerAddressCeiling, rl.PerAddress)
	}
}

func requireCredentials(pr Provider, where string, add func(string, ...any)) {
	env := "AUTH_" + envName(pr.ID)
	if pr.ClientID == "" {
		add("%s: client_id is missing (set it here or in %s_ID)", where, env)
	}
	if pr.ClientSecret == "" {
		add("%s: client_secret is missing (set it here or in %s_SECRET)", where, env)
	}
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Merge joins the Problems of several steps (Load, then Validate) into one
// list; nil errors are skipped, and any other error is returned as is.
func Merge(errs ...error) error {
	var all Problems
	for _, err := range errs {
		if err == nil {
			continue
		}
		var p Problems
		if !errors.As(err, &p) {
			return err
		}
		all = append(all, p...)
	}
	if len(all) == 0 {
		return nil
	}
	return all
}

// IsProblems reports whether err lists validation problems.
func IsProblems(err error) bool {
	var p Problems
	return errors.As(err, &p)
}

// envName is the provider id as it appears in AUTH_<ID>_* variables.
func envName(id string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(id))
}
