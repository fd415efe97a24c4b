package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/latchkey-auth/latchkey/app/config/secretfile"
	"github.com/latchkey-auth/latchkey/app/config/yamlnode"
)

// Defaults returns the configuration used when nothing is set.
func Defaults() Config {
	return Config{
		ServiceURL:   "http://localhost:3000/api/auth",
		Port:         3000,
		DataDir:      "data",
		MaxBodyBytes: 64 << 10,
		Server:       Server{MaxConnections: 4096, IdleTimeout: Duration(75 * time.Second)},
		// A pg_auto_failover fail-over takes some 20 s, Patroni's about
		// 30 s: an instance (re)started meanwhile waits it out.
		Database: Database{StartupWait: Duration(60 * time.Second)},
		HSTS:     HSTS{MaxAge: defaultHSTSMaxAge},
		Session: Session{
			Strategy:  StrategyDatabase,
			MaxAge:    Duration(30 * 24 * time.Hour),
			UpdateAge: Duration(24 * time.Hour),
			// A stolen cookie kept alive by use still dies 30 days after
			// the sign-in it came from.
			AbsoluteMaxAge: Duration(30 * 24 * time.Hour),
			RevocationPoll: Duration(time.Second),
			CacheTTL:       Duration(time.Second),
			OutageGrace:    Duration(2 * time.Minute),
		},
		Cookies:   Cookies{Style: StyleNextAuth},
		Log:       Log{Format: LogText, Access: true},
		Theme:     Theme{ColorScheme: SchemeAuto},
		I18n:      I18n{Languages: []string{}},
		TwoFactor: TwoFactor{Mode: TwoFactorOff, RememberDevice: defaultRememberDevice},
		Account:   Account{SelfDelete: true},
		OpenID:    defaultOpenID(),
		Webhooks:  defaultWebhooks(),
		Tokens:    defaultTokens(),
	}
}

// Env is how Load reads the environment; tests pass a map.
type Env func(key string) (string, bool)

// Parse applies a YAML document over the defaults. ${VAR} references in
// values are replaced from the environment after parsing, so a value is
// taken literally and never read as YAML. Unknown keys and values of the
// wrong type are reported together, with their lines, as Problems; a YAML
// syntax error is returned alone.
func Parse(data []byte, env Env) (Config, error) {
	cfg := Defaults()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	if len(doc.Content) == 0 {
		return cfg, nil // empty file: all defaults
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return cfg, nil
	}
	if root.Kind != yaml.MappingNode {
		return cfg, fmt.Errorf("config: line %d: the file must be a mapping of keys, like config.yaml", root.Line)
	}
	p := Problems(yamlnode.UnknownKeys(root, reflect.TypeOf(cfg), sectionName))
	yamlnode.ExpandEnv(root, env)
	if err := root.Decode(&cfg); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return cfg, fmt.Errorf("config: %w", err)
		}
		p = append(p, te.Errors...)
	}
	if len(p) > 0 {
		return cfg, p
	}
	return cfg, nil
}

// sectionName is how an unknown key's message names the section it is in.
func sectionName(t reflect.Type) string {
	switch t {
	case reflect.TypeOf(Config{}):
		return "the top level"
	case reflect.TypeOf(Provider{}):
		return "a provider"
	case reflect.TypeOf(WebhookEndpoint{}):
		return "a webhook endpoint"
	}
	return strings.ToLower(t.Name())
}

// Load reads the file (when data is non-nil), then the environment. Every
// problem found on the way comes back together as Problems, along with the
// config as far as it could be read, so Validate can add its own; only a
// YAML syntax error stops early. Load does not validate: call Validate.
func Load(data []byte, env Env) (Config, error) {
	cfg := Defaults()
	var p Problems
	if data != nil {
		var err error
		cfg, err = Parse(data, env)
		if err != nil && !errors.As(err, &p) {
			return cfg, err
		}
	}
	p = append(p, cfg.applyEnv(env)...)
	cfg.Normalize()
	if len(p) > 0 {
		return cfg, p
	}
	return cfg, nil
}

// Normalize fills what an empty value means, so that nothing downstream
// decides it again: an unset service URL is local development on the
// configured port, a provider without a type is an OAuth catalogue one, and
// a credentials provider without an id is "credentials".
// The origins and host names compared with what browsers send are written
// as browsers write them (normalNames).
// Load calls it; app.New calls it for configs built in code. It is idempotent.
func (c *Config) Normalize() {
	if strings.TrimSpace(c.ServiceURL) == "" {
		c.ServiceURL = fmt.Sprintf("http://localhost:%d/api/auth", c.Port)
	}
	c.normalNames()
	for i := range c.Providers {
		if c.Providers[i].Type == "" {
			c.Providers[i].Type = TypeOAuth
		}
		if c.Providers[i].Type == TypeCredentials && c.Providers[i].ID == "" {
			c.Providers[i].ID = TypeCredentials // next-auth's default id
		}
	}
}

// applyEnv layers the documented environment variables over the file and
// returns what it could not use.
func (c *Config) applyEnv(env Env) (p Problems) {
	if v, ok := first(env, "SERVICE_URL", "AUTH_URL", "NEXTAUTH_URL"); ok {
		c.ServiceURL = v
	}
	if v, ok := secretFromEnv(env, &p, "AUTH_SECRET", "NEXTAUTH_SECRET"); ok {
		c.Secret = v
	}
	// Auth.js's rotation order: the highest-numbered secret set comes first
	// and signs everything new; AUTH_SECRET comes last.
	c.RotationSecrets = nil
	for _, n := range []string{"3", "2", "1"} {
		if v, ok := secretFromEnv(env, &p, "AUTH_SECRET_"+n); ok {
			c.RotationSecrets = append(c.RotationSecrets, v)
		}
	}
	if v, ok := first(env, "PORT"); ok {
		if n, err := strconv.Atoi(v); err != nil {
			p = append(p, fmt.Sprintf("PORT: %q is not a number", v))
		} else {
			c.Port = n
		}
	}
	if v, ok := first(env, "LISTEN"); ok {
		c.Listen = v
	}
	if v, ok := first(env, "DATABASE_URL"); ok {
		c.DatabaseURL = v
	}
	c.applyOperationsEnv(env)
	if v, ok := secretFromEnv(env, &p, "TOKENS_CLIENT_SECRET"); ok {
		c.Tokens.ClientSecret = v
	}
	p = append(p, c.applyHSTSEnv(env)...)
	p = append(p, c.applyWebhooksEnv(env)...)
	for i := range c.Providers {
		pr := &c.Providers[i]
		if pr.Type != "" && pr.Type != TypeOAuth && pr.Type != TypeOIDC {
			continue
		}
		key := "AUTH_" + envName(pr.ID)
		if v, ok := first(env, key+"_ID"); ok && pr.ClientID == "" {
			pr.ClientID = v
		}
		if v, ok := first(env, key+"_SECRET"); ok && pr.ClientSecret == "" {
			pr.ClientSecret = v
		}
		if v, ok := first(env, key+"_ISSUER"); ok && pr.Issuer == "" {
			pr.Issuer = v
		}
	}
	return p
}

func first(env Env, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := env(k); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

// secretFromEnv reads the first of keys that is set, else the file named by
// the first key's _FILE variant. A value and a file together are refused,
// as the official container images refuse POSTGRES_PASSWORD beside its
// _FILE: which one the operator meant cannot be known, and a stale value
// left in an environment would silently win over the file they rotate.
func secretFromEnv(env Env, p *Problems, keys ...string) (string, bool) {
	fileKey := keys[0] + "_FILE"
	path, fileSet := env(fileKey)
	fileSet = fileSet && path != ""
	v, ok := first(env, keys...)
	switch {
	case ok && fileSet:
		*p = append(*p, fmt.Sprintf("%s: set beside %s: set one of them", fileKey, strings.Join(keys, " or ")))
		return "", false
	case ok:
		return v, true
	case !fileSet:
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		*p = append(*p, fmt.Sprintf("%s: %v", fileKey, err))
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// FromEnv reads a value that must stay off a command line (an admin
// command's database URL with its password) as the secrets are read: the
// variable name, else the file its _FILE variant names. Unset is "".
func FromEnv(env Env, name string) (string, error) {
	if !envVarName.MatchString(name) {
		return "", fmt.Errorf("%q is not an environment variable's name", name)
	}
	var p Problems
	v, _ := secretFromEnv(env, &p, name)
	if len(p) > 0 {
		return "", p
	}
	return v, nil
}

// Secrets is every active secret, the one that signs and encrypts
// everything new first: AUTH_SECRET_3, _2, _1 (those set), then
// AUTH_SECRET. Every one of them is accepted when reading.
func (c *Config) Secrets() []string {
	out := make([]string, 0, len(c.RotationSecrets)+1)
	for _, s := range append(append([]string{}, c.RotationSecrets...), c.Secret) {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// EnsureSecret generates a secret in DataDir when none is configured, so a
// fresh `go run .` works and keeps sessions valid across restarts.
func (c *Config) EnsureSecret() error {
	if len(c.Secrets()) > 0 {
		return nil
	}
	secret, err := secretfile.Ensure(c.DataDir)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	c.Secret, c.SecretGenerated = secret, true
	return nil
}
