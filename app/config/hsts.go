package config

import (
	"fmt"
	"time"
)

// HSTS is the Strict-Transport-Security header every answer carries when
// SERVICE_URL is https (never over http, where browsers ignore it and a
// developer's localhost must not be pinned to https).
type HSTS struct {
	// MaxAge is how long a browser that has seen the header goes only to
	// https on the service's host (HSTS_MAX_AGE): a year by default. 0
	// sends max-age=0, which makes browsers forget an earlier header.
	MaxAge Duration `yaml:"max_age"`
	// IncludeSubdomains extends it to every host below the service's. Off
	// by default: it would pin hosts latchkey does not serve (a sibling
	// app still on http) to https for MaxAge, with no way back before.
	IncludeSubdomains bool `yaml:"include_subdomains"`
}

// defaultHSTSMaxAge is a year, the value HSTS guidance and preload lists
// ask for.
const defaultHSTSMaxAge = Duration(365 * 24 * time.Hour)

// applyHSTSEnv layers HSTS_MAX_AGE over the file.
func (c *Config) applyHSTSEnv(env Env) (p Problems) {
	v, ok := first(env, "HSTS_MAX_AGE")
	if !ok {
		return nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		return Problems{fmt.Sprintf("HSTS_MAX_AGE: %v", err)}
	}
	c.HSTS.MaxAge = Duration(d)
	return nil
}

// validateHSTS checks the max-age: whole seconds, not negative.
func (c *Config) validateHSTS(add func(string, ...any)) {
	if d := c.HSTS.MaxAge.D(); d < 0 || d%time.Second != 0 {
		add("hsts.max_age (HSTS_MAX_AGE): %s must be whole seconds, 0 or more (e.g. 365d)", d)
	}
}

// HSTSValue is the Strict-Transport-Security header value, or "" when
// none is sent (SERVICE_URL is not https).
func (c *Config) HSTSValue() string {
	base, err := ParseBase(c.ServiceURL)
	if err != nil || !base.Secure {
		return ""
	}
	v := fmt.Sprintf("max-age=%d", int64(c.HSTS.MaxAge.D()/time.Second))
	if c.HSTS.IncludeSubdomains {
		v += "; includeSubDomains"
	}
	return v
}
