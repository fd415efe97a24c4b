package config

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/app/egress"
)

// webhookName: what metric labels, log lines and command lines carry as
// is.
var webhookName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// envVarName is a portable environment variable name.
var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// webhookSecretPrefix starts every Standard Webhooks symmetric secret.
const webhookSecretPrefix = "whsec_"

// applyWebhooksEnv reads each endpoint's secrets from the variable its
// secret_env names, else from the file named by that variable's _FILE
// variant (as AUTH_SECRET_FILE), split at white space: during a rotation
// the new secret and the old one, the new first.
func (c *Config) applyWebhooksEnv(env Env) (p Problems) {
	for i := range c.Webhooks.Endpoints {
		e := &c.Webhooks.Endpoints[i]
		e.Secrets = nil
		if !envVarName.MatchString(e.SecretEnv) {
			continue // Validate says what is wrong with the name
		}
		if v, ok := secretFromEnv(env, &p, e.SecretEnv); ok {
			e.Secrets = strings.Fields(v)
		}
	}
	return p
}

// validateWebhooks reports every problem of the webhooks section. No
// message shows a secret or a URL's path, query or user information
// (which may carry a receiver's token): only the scheme and host.
func (c *Config) validateWebhooks(add func(string, ...any)) (warnings []string) {
	w := c.Webhooks
	if t := w.Timeout.D(); t < time.Second || t > 5*time.Minute {
		add("webhooks.timeout: %s must be between 1s and 5m", t)
	}
	if p := w.PollInterval.D(); p < 100*time.Millisecond || p > time.Minute {
		add("webhooks.poll_interval: %s must be between 100ms and 1m", p)
	}
	if n := w.PerEndpointConcurrency; n < 1 || n > 16 {
		add("webhooks.per_endpoint_concurrency: %d must be between 1 and 16 (the attempts each instance has in flight)", n)
	}
	var total time.Duration
	for i, d := range w.RetrySchedule {
		if d <= 0 {
			add("webhooks.retry_schedule[%d]: %s must be positive", i, d.D())
		}
		total += d.D()
	}
	if len(w.RetrySchedule) == 0 {
		add("webhooks.retry_schedule: needs at least one delay (the default is [5s, 5m, 30m, 2h, 5h, 10h, 10h])")
	}
	if len(w.Endpoints) > 0 && len(w.RetrySchedule) > 0 && total < 24*time.Hour {
		warnings = append(warnings, fmt.Sprintf("webhooks.retry_schedule: retries end %s after the first attempt: a receiver down for longer gets its events marked failed (`latchkey webhooks retry-failed` queues them again)", total))
	}
	seen := map[string]bool{}
	for i, e := range w.Endpoints {
		at := fmt.Sprintf("webhooks.endpoints[%d]", i)
		if e.Name != "" {
			at += " (" + e.Name + ")"
		}
		switch {
		case !webhookName.MatchString(e.Name):
			add("%s: name %q must be 1-64 lower-case letters, digits, - or _", at, e.Name)
		case seen[e.Name]:
			add("%s: duplicate name", at)
		}
		seen[e.Name] = true
		if p := egress.URLProblem(e.URL, e.AllowPrivate); p != "" {
			add("%s: url %s", at, p)
		}
		validateWebhookEvents(e, at, add)
		validateWebhookSecrets(e, at, add)
	}
	return warnings
}

// validateWebhookEvents refuses event types not in the catalogue, so that
// a typo does not silently subscribe to nothing.
func validateWebhookEvents(e WebhookEndpoint, at string, add func(string, ...any)) {
	known := WebhookEventTypes()
	for _, t := range e.Events {
		switch {
		case t == "webhook.test":
			add("%s: events: webhook.test is not subscribed to: `latchkey webhooks test` sends it to the endpoint whatever its events", at)
		case !slices.Contains(known, t):
			add("%s: events: %q is not an event type (one of: %s)", at, t, strings.Join(known, ", "))
		}
	}
}

// validateWebhookSecrets requires a secret variable and, for an endpoint
// that is on, at least one well-formed secret in it: an unsigned webhook
// could be forged by anyone who finds the receiver's URL.
func validateWebhookSecrets(e WebhookEndpoint, at string, add func(string, ...any)) {
	switch {
	case e.SecretEnv == "":
		add("%s: secret_env is required: the name of the environment variable holding the endpoint's whsec_ secret, e.g. LATCHKEY_WEBHOOK_%s_SECRET", at, envName(e.Name))
		return
	case !envVarName.MatchString(e.SecretEnv):
		add("%s: secret_env %q is not an environment variable name (letters, digits and _, not starting with a digit)", at, e.SecretEnv)
		return
	case len(e.Secrets) == 0 && e.On():
		add("%s: %s (or %s_FILE) is unset or empty: set it to the endpoint's secret, e.g. whsec_$(openssl rand -base64 32)", at, e.SecretEnv, e.SecretEnv)
	}
	for j, s := range e.Secrets {
		if p := webhookSecretProblem(s); p != "" {
			add("%s: %s: secret %d of %d %s", at, e.SecretEnv, j+1, len(e.Secrets), p)
		}
	}
}

// webhookSecretProblem says what is wrong with a secret ("": nothing)
// without quoting it: the Standard Webhooks form is whsec_ and the
// standard (padded) base64 of a key of 24 to 64 bytes, the form the
// receivers' libraries (standardwebhooks for Node, Python, Go) read.
func webhookSecretProblem(s string) string {
	b64, ok := strings.CutPrefix(s, webhookSecretPrefix)
	if !ok {
		return "does not start with whsec_ (the Standard Webhooks form: whsec_ and the base64 of 24 to 64 random bytes, e.g. whsec_$(openssl rand -base64 32))"
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	switch {
	case err != nil:
		return "is not whsec_ followed by standard, padded base64"
	case len(key) < 24 || len(key) > 64:
		return fmt.Sprintf("holds a key of %d bytes: use 24 to 64 random bytes", len(key))
	}
	return ""
}
