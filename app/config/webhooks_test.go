package config_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// whsec is a well-formed Standard Webhooks secret of n bytes of b.
func whsec(b byte, n int) string {
	return "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, n))
}

// Without endpoints webhooks are off; the defaults are the documented
// time-out, poll and Standard Webhooks retry schedule (about 27.6 h).
func TestWebhooksDefaults(t *testing.T) {
	cfg, err := config.Load(nil, noEnv)
	require.NoError(t, err)
	w := cfg.Webhooks
	require.False(t, w.Enabled())
	require.Equal(t, 10*time.Second, w.Timeout.D())
	require.Equal(t, time.Second, w.PollInterval.D())
	var total time.Duration
	for _, d := range w.Schedule() {
		total += d
	}
	require.Len(t, w.Schedule(), 7)
	require.Equal(t, 27*time.Hour+35*time.Minute+5*time.Second, total)
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err)
}

// Endpoints load from the file, their secrets from the variable named by
// secret_env (several for a rotation, the new one first) or its _FILE
// variant; enabled defaults to true.
func TestWebhooksLoad(t *testing.T) {
	newer, older, fromFile := whsec(1, 32), whsec(2, 24), whsec(3, 64)
	path := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(path, []byte(fromFile+"\n"), 0o600))
	cfg, err := config.Load([]byte(`
webhooks:
  timeout: 3s
  poll_interval: 250ms
  retry_schedule: [1s, 2s]
  endpoints:
    - name: crm
      url: https://hooks.example.com/latchkey?token=abc
      secret_env: CRM_SECRET
      events: [user.created, session.created]
    - name: audit
      url: http://localhost:9000/hook
      secret_env: AUDIT_SECRET
    - name: paused
      url: https://10.1.2.3/hook
      secret_env: PAUSED_SECRET
      enabled: false
      allow_private: true
`), env("CRM_SECRET", " "+newer+"  "+older+" ", "AUDIT_SECRET_FILE", path))
	require.NoError(t, err)
	w := cfg.Webhooks
	require.Equal(t, 3*time.Second, w.Timeout.D())
	require.Equal(t, 250*time.Millisecond, w.PollInterval.D())
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, w.Schedule())
	require.Equal(t, []string{newer, older}, w.Endpoints[0].Secrets)
	require.Equal(t, []string{fromFile}, w.Endpoints[1].Secrets)
	require.Empty(t, w.Endpoints[2].Secrets)

	require.True(t, w.Enabled())
	var active []string
	for _, e := range w.Active() {
		active = append(active, e.Name)
	}
	require.Equal(t, []string{"crm", "audit"}, active, "a paused endpoint receives nothing")
	require.True(t, w.Endpoints[0].Wants("session.created"))
	require.False(t, w.Endpoints[0].Wants("user.deleted"))
	require.True(t, w.Endpoints[1].Wants("user.deleted"), "no events: every type")
	paused, ok := w.Endpoint("paused")
	require.True(t, ok)
	require.False(t, paused.On())
	_, ok = w.Endpoint("nosuch")
	require.False(t, ok)

	warnings, err := cfg.Validate(catalogue)
	require.NoError(t, err, "a paused endpoint needs no secret yet")
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "webhooks.retry_schedule: retries end 3s after the first attempt")

	_, err = config.Load([]byte("webhooks:\n  endpoints:\n    - name: x\n      secret: inline\n"), noEnv)
	requireProblem(t, problems(t, err), `unknown key "secret" in a webhook endpoint`)
	_, err = config.Load([]byte("webhooks:\n  endpoints:\n    - name: x\n      secret_env: X\n"), env("X_FILE", filepath.Join(t.TempDir(), "missing")))
	requireProblem(t, problems(t, err), "X_FILE: open ")
}

// The URLs a webhook may and may not be sent to: https, http only to a
// loopback host, and no literal address inside a network unless
// allow_private.
func TestWebhookURLs(t *testing.T) {
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		problem      string // "" for none
	}{
		{"https://hooks.example.com/latchkey", false, ""},
		{"https://hooks.example.com:8443/x?token=1", false, ""},
		{"http://localhost:9000/hook", false, ""},
		{"http://127.0.0.2/hook", false, ""},
		{"http://[::1]:9000/hook", false, ""},
		{"http://LOCALHOST.:9000/hook", false, ""}, // as the dialer reads it (app/egress)
		{"https://8.8.8.8/hook", false, ""},
		{"https://10.0.0.1/hook", true, ""},
		{"https://169.254.169.254/latest", true, ""},
		{"http://hooks.example.com/latchkey", false, "http://hooks.example.com uses http for a host other than loopback"},
		{"http://10.0.0.1/", false, "uses http for a host other than loopback"},
		{"http://10.0.0.1/", true, "uses http for a host other than loopback"},
		{"http://169.254.169.254/", false, "uses http for a host other than loopback"},
		{"https://10.0.0.1/", false, "https://10.0.0.1 is a private address"},
		{"https://172.16.5.4/", false, "private"},
		{"https://192.168.1.1/", false, "private"},
		{"https://[fd00::1]/", false, "private"},
		{"https://[::ffff:10.0.0.1]/", false, "private"},
		{"https://169.254.169.254/latest/meta-data", false, "https://169.254.169.254 is a link-local address"},
		{"https://[fe80::1]/", false, "link-local"},
		{"https://100.64.0.1/", false, "shared (CGNAT)"},
		{"https://0.0.0.0/", false, "unspecified"},
		{"https://[::]/", false, "unspecified"},
		{"https://224.0.0.1/", false, "multicast"},
		{"https://user:hunter2@hooks.example.com/", false, "holds a user name or password"},
		{"ftp://hooks.example.com/", false, "is not an absolute https URL"},
		{"hooks.example.com/latchkey", false, "is not an absolute https URL"},
		{"https://", false, "is not an absolute https URL"},
		{"", false, "is not an absolute https URL"},
	} {
		cfg := webhookConfig(config.WebhookEndpoint{Name: "e", URL: tc.url, SecretEnv: "E", AllowPrivate: tc.allowPrivate, Secrets: []string{whsec(1, 32)}})
		_, err := cfg.Validate(catalogue)
		if tc.problem == "" {
			require.NoError(t, err, tc.url)
			continue
		}
		p := problems(t, err)
		require.Len(t, p, 1, tc.url)
		requireProblem(t, p, "webhooks.endpoints[0] (e): url ", tc.problem)
		require.NotContains(t, p[0], "hunter2")
		require.NotContains(t, p[0], "/latest", "the path is not shown: it may carry a receiver's token")
	}
}

// Every other mistake in the section is listed at once, and no message
// quotes a secret.
func TestWebhooksValidateListsEveryProblem(t *testing.T) {
	good := whsec(9, 32)
	cfg := webhookConfig(
		config.WebhookEndpoint{Name: "Bad Name", URL: "https://a.example.com/", SecretEnv: "A", Secrets: []string{good}},
		config.WebhookEndpoint{Name: "dup", URL: "https://b.example.com/", SecretEnv: "B", Secrets: []string{good}, Events: []string{"user.created", "user.signedIn", "webhook.test"}},
		config.WebhookEndpoint{Name: "dup", URL: "https://c.example.com/", SecretEnv: "C", Secrets: []string{good}},
		config.WebhookEndpoint{Name: "nosecret", URL: "https://d.example.com/"},
		config.WebhookEndpoint{Name: "badenv", URL: "https://e.example.com/", SecretEnv: "1-NOPE"},
		config.WebhookEndpoint{Name: "unset", URL: "https://f.example.com/", SecretEnv: "UNSET"},
		config.WebhookEndpoint{Name: "malformed", URL: "https://g.example.com/", SecretEnv: "M",
			Secrets: []string{"plain-old-password-1234567890", "whsec_not*base64", whsec(1, 16), good}},
	)
	cfg.Webhooks.Timeout = config.Duration(0)
	cfg.Webhooks.PollInterval = config.Duration(2 * time.Minute)
	cfg.Webhooks.PerEndpointConcurrency = 17
	cfg.Webhooks.RetrySchedule = []config.Duration{config.Duration(time.Second), config.Duration(-time.Second)}
	_, err := cfg.Validate(catalogue)
	p := problems(t, err)
	for _, want := range [][]string{
		{"webhooks.timeout", "between 1s and 5m"},
		{"webhooks.poll_interval", "between 100ms and 1m"},
		{"webhooks.per_endpoint_concurrency", "between 1 and 16"},
		{"webhooks.retry_schedule[1]", "must be positive"},
		{"webhooks.endpoints[0] (Bad Name): name", "lower-case"},
		{"webhooks.endpoints[2] (dup): duplicate name"},
		{"webhooks.endpoints[1] (dup): events: \"user.signedIn\" is not an event type", "session.created"},
		{"webhooks.endpoints[1] (dup): events: webhook.test"},
		{"webhooks.endpoints[3] (nosecret): secret_env is required", "LATCHKEY_WEBHOOK_NOSECRET_SECRET"},
		{"webhooks.endpoints[4] (badenv): secret_env \"1-NOPE\" is not an environment variable name"},
		{"webhooks.endpoints[5] (unset): UNSET (or UNSET_FILE) is unset or empty"},
		{"webhooks.endpoints[6] (malformed): M: secret 1 of 4 does not start with whsec_"},
		{"webhooks.endpoints[6] (malformed): M: secret 2 of 4 is not whsec_ followed by standard, padded base64"},
		{"webhooks.endpoints[6] (malformed): M: secret 3 of 4 holds a key of 16 bytes"},
	} {
		requireProblem(t, p, want...)
	}
	require.Len(t, p, 14, p.Error())
	for _, s := range []string{good, "plain-old-password", "not*base64", whsec(1, 16)} {
		require.NotContains(t, p.Error(), s)
	}

	cfg.Webhooks.RetrySchedule = nil
	_, err = cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "webhooks.retry_schedule: needs at least one delay")
}

// The catalogue is the design's: every type a change emits, and not the
// test-send's own.
func TestWebhookEventTypes(t *testing.T) {
	types := config.WebhookEventTypes()
	require.Len(t, types, 15)
	require.Contains(t, types, "session.created")
	require.Contains(t, types, "two_factor.recovery_code_used")
	require.NotContains(t, types, "webhook.test")
	types[0] = "changed"
	require.Equal(t, "user.created", config.WebhookEventTypes()[0], "a fresh list each time")
	for _, ty := range types[1:] {
		require.Equal(t, strings.ToLower(ty), ty)
	}
}

// webhookConfig is a valid configuration with these endpoints.
func webhookConfig(endpoints ...config.WebhookEndpoint) config.Config {
	cfg := config.Defaults()
	cfg.Webhooks.Endpoints = endpoints
	return cfg
}
