package config

import (
	"fmt"
	"time"
)

// Tokens is GET {base}/token/:provider, which hands the signed-in user's
// provider access token (kept for providers with store_tokens) to the
// app's backend, refreshing it first when it is about to expire
// (docs/provider-tokens.md).
type Tokens struct {
	// ClientSecret is the shared secret an app's backend sends as
	// `Authorization: Bearer <secret>` (TOKENS_CLIENT_SECRET,
	// TOKENS_CLIENT_SECRET_FILE). Without it, only requests whose peer is
	// one of trusted_proxies are served: the endpoint is never open to
	// browsers, whose scripts an XSS could run.
	ClientSecret string `yaml:"client_secret"`
	// RefreshSkew: a token expiring within it is refreshed before it is
	// handed out, so the app never gets one that dies in flight.
	RefreshSkew Duration `yaml:"refresh_skew"`
	// RefreshWait bounds how long a request waits for a refresh another
	// request (on any instance) is making for the same account.
	RefreshWait Duration `yaml:"refresh_wait"`
}

// defaultTokens: a minute of skew, and a wait longer than the 10 s every
// call to an identity provider is bounded by.
func defaultTokens() Tokens {
	return Tokens{RefreshSkew: Duration(time.Minute), RefreshWait: Duration(15 * time.Second)}
}

// StoresTokens reports whether any provider keeps its tokens.
func (c *Config) StoresTokens() bool {
	for _, p := range c.Providers {
		if p.StoreTokens {
			return true
		}
	}
	return false
}

// validateTokens checks the token endpoint's settings and that only OAuth
// and OIDC providers keep tokens.
func (c *Config) validateTokens(add func(string, ...any)) {
	t := c.Tokens
	if t.ClientSecret != "" && len(t.ClientSecret) < 32 {
		add("tokens.client_secret: too short (%d characters); use at least 32, e.g. `openssl rand -hex 32`", len(t.ClientSecret))
	}
	if s := t.RefreshSkew.D(); s < 0 || s > time.Hour {
		add("tokens.refresh_skew: %s must be between 0 and 1h", s)
	}
	if w := t.RefreshWait.D(); w < time.Second || w > 5*time.Minute {
		add("tokens.refresh_wait: %s must be between 1s and 5m", w)
	}
	for i, p := range c.Providers {
		if p.StoreTokens && p.Type != TypeOAuth && p.Type != TypeOIDC && p.Type != "" {
			add("%s: store_tokens is for oauth and oidc providers only", fmt.Sprintf("providers[%d] (%s)", i, p.ID))
		}
	}
}
