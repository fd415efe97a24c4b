package config

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults returns the configuration used when nothing is set.
func Defaults() Config {
	return Config{
		ServiceURL:   "http://localhost:3000/api/auth",
		Port:         3000,
		DataDir:      "data",
		MaxBodyBytes: 64 << 10,
		Session: Session{
			Strategy:  StrategyDatabase,
			MaxAge:    Duration(30 * 24 * time.Hour),
			UpdateAge: Duration(24 * time.Hour),
		},
		Cookies: Cookies{Style: StyleNextAuth},
	}
}

// Env is how Load reads the environment; tests pass a map.
type Env func(key string) (string, bool)

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse applies a YAML document over the defaults, expanding ${VAR}
// references first. Unknown keys are errors, reported with their lines.
func Parse(data []byte, env Env) (Config, error) {
	cfg := Defaults()
	expanded := envRef.ReplaceAllFunc(data, func(m []byte) []byte {
		v, _ := env(string(m[2 : len(m)-1]))
		return []byte(v)
	})
	dec := yaml.NewDecoder(bytes.NewReader(expanded))
	dec.KnownFields(true)
	// An empty file is io.EOF: all defaults.
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// Load reads the file (when data is non-nil), then the environment, then
// fills the secret. It does not validate: call Validate for that.
func Load(data []byte, env Env) (Config, error) {
	cfg := Defaults()
	if data != nil {
		var err error
		if cfg, err = Parse(data, env); err != nil {
			return cfg, err
		}
	}
	if err := cfg.applyEnv(env); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// applyEnv layers the documented environment variables over the file.
func (c *Config) applyEnv(env Env) error {
	if v, ok := first(env, "SERVICE_URL", "AUTH_URL", "NEXTAUTH_URL"); ok {
		c.ServiceURL = v
	}
	if v, ok := first(env, "AUTH_SECRET", "NEXTAUTH_SECRET"); ok {
		c.Secret = v
	} else if path, ok := env("AUTH_SECRET_FILE"); ok && path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("config: AUTH_SECRET_FILE: %w", err)
		}
		c.Secret = strings.TrimSpace(string(b))
	}
	if v, ok := first(env, "PORT"); ok {
		p, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("config: PORT %q is not a number", v)
		}
		c.Port = p
	}
	if v, ok := first(env, "DATABASE_URL"); ok {
		c.DatabaseURL = v
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Type != "" && p.Type != TypeOAuth && p.Type != TypeOIDC {
			continue
		}
		key := "AUTH_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(p.ID))
		if v, ok := first(env, key+"_ID"); ok && p.ClientID == "" {
			p.ClientID = v
		}
		if v, ok := first(env, key+"_SECRET"); ok && p.ClientSecret == "" {
			p.ClientSecret = v
		}
		if v, ok := first(env, key+"_ISSUER"); ok && p.Issuer == "" {
			p.Issuer = v
		}
	}
	return nil
}

func first(env Env, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := env(k); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

// EnsureSecret generates a secret in DataDir when none is configured, so a
// fresh `go run .` works and keeps sessions valid across restarts.
func (c *Config) EnsureSecret() error {
	if c.Secret != "" {
		return nil
	}
	path := filepath.Join(c.DataDir, "secret")
	b, err := os.ReadFile(path)
	switch {
	case err == nil && len(bytes.TrimSpace(b)) >= 32:
		c.Secret = string(bytes.TrimSpace(b))
	case err == nil || errors.Is(err, fs.ErrNotExist):
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			return fmt.Errorf("config: generate secret: %w", err)
		}
		c.Secret = hex.EncodeToString(buf)
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return fmt.Errorf("config: create data folder: %w", err)
		}
		if err := os.WriteFile(path, []byte(c.Secret+"\n"), 0o600); err != nil {
			return fmt.Errorf("config: store generated secret: %w", err)
		}
	default:
		return fmt.Errorf("config: read generated secret: %w", err)
	}
	c.SecretGenerated = true
	return nil
}

// DatabasePath returns the SQLite file path from DatabaseURL or the data folder.
func (c *Config) DatabasePath() string {
	u := c.DatabaseURL
	if u == "" {
		return filepath.Join(c.DataDir, "latchkey.db")
	}
	for _, p := range []string{"sqlite3://", "sqlite://", "file:"} {
		if rest, ok := strings.CutPrefix(u, p); ok {
			u = rest
			break
		}
	}
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	return u
}
