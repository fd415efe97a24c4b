package config

import (
	"slices"
	"time"

	"github.com/latchkey-auth/latchkey/models/events"
)

// Webhooks are signed HTTP calls that tell services outside latchkey
// about account changes (docs/webhooks.md): next-auth's `events` run only
// inside its Node process, and a team running latchkey as a binary has
// nowhere to put that code. Events are written to an outbox in the same
// transaction as the change and delivered at least once by a worker.
type Webhooks struct {
	// Timeout bounds one delivery attempt (connect to last byte of the
	// answer); a time-out is a failed attempt, retried.
	Timeout Duration `yaml:"timeout"`
	// PollInterval is how often each instance's worker looks for due
	// deliveries: an event is first sent within it of its commit.
	PollInterval Duration `yaml:"poll_interval"`
	// PerEndpointConcurrency bounds each instance's attempts in flight to
	// one endpoint (of its 16), so a receiver that hangs delays only its
	// own events.
	PerEndpointConcurrency int `yaml:"per_endpoint_concurrency"`
	// RetrySchedule is the wait after each failed attempt; after the last
	// one the delivery is marked failed (`latchkey webhooks retry-failed`
	// queues it again). The default spans about 27.6 hours.
	RetrySchedule []Duration `yaml:"retry_schedule"`
	// Endpoints are the receivers; none: webhooks are off and nothing is
	// written to the outbox.
	Endpoints []WebhookEndpoint `yaml:"endpoints"`
}

// WebhookEndpoint is one receiver of events.
type WebhookEndpoint struct {
	// Name identifies the endpoint in metrics, logs and admin commands.
	Name string `yaml:"name"`
	// URL receives a POST per event: https, or http to a loopback host.
	URL string `yaml:"url"`
	// SecretEnv names the environment variable (or, when it is unset, the
	// file named by its _FILE variant) holding the endpoint's whsec_
	// secrets, space-separated: the secret is never in the file itself.
	SecretEnv string `yaml:"secret_env"`
	// Events are the event types sent; empty: every type.
	Events []string `yaml:"events"`
	// Enabled: nil means true (see On). false stops the endpoint without
	// removing it from the file: no event is queued for it, and those
	// still pending wait (no worker claims them) until the retry schedule's
	// span has passed, then fail, as for a removed endpoint.
	Enabled *bool `yaml:"enabled"`
	// AllowPrivate lets the URL be (or resolve to) a private, link-local
	// or otherwise internal address, refused by default so that a
	// mistyped config cannot reach into the operator's network.
	AllowPrivate bool `yaml:"allow_private"`

	// Secrets are read from SecretEnv by Load: every one signs each
	// delivery (rotation), the first being the newest.
	Secrets []string `yaml:"-"`
}

// On reports whether the endpoint receives events.
func (e WebhookEndpoint) On() bool { return e.Enabled == nil || *e.Enabled }

// Wants reports whether the endpoint subscribes to eventType (an empty
// list is every type).
func (e WebhookEndpoint) Wants(eventType string) bool {
	return len(e.Events) == 0 || slices.Contains(e.Events, eventType)
}

// Enabled reports whether any endpoint receives events: without one, no
// event is written and no worker runs.
func (w Webhooks) Enabled() bool { return len(w.Active()) > 0 }

// Active is the endpoints that receive events, in config order.
func (w Webhooks) Active() []WebhookEndpoint {
	var out []WebhookEndpoint
	for _, e := range w.Endpoints {
		if e.On() {
			out = append(out, e)
		}
	}
	return out
}

// Endpoint finds an endpoint by name, enabled or not.
func (w Webhooks) Endpoint(name string) (WebhookEndpoint, bool) {
	for _, e := range w.Endpoints {
		if e.Name == name {
			return e, true
		}
	}
	return WebhookEndpoint{}, false
}

// Schedule is RetrySchedule as durations.
func (w Webhooks) Schedule() []time.Duration {
	out := make([]time.Duration, len(w.RetrySchedule))
	for i, d := range w.RetrySchedule {
		out[i] = d.D()
	}
	return out
}

// defaultWebhooks: a 10 s time-out, a poll a second, and the Standard
// Webhooks/Svix retry schedule (8 attempts over about 27.6 hours, so a
// receiver down for a day loses nothing).
func defaultWebhooks() Webhooks {
	return Webhooks{
		Timeout:      Duration(10 * time.Second),
		PollInterval: Duration(time.Second),
		// 4 of the worker's 16: a hanging receiver holds a quarter.
		PerEndpointConcurrency: 4,
		RetrySchedule: []Duration{
			Duration(5 * time.Second), Duration(5 * time.Minute), Duration(30 * time.Minute),
			Duration(2 * time.Hour), Duration(5 * time.Hour), Duration(10 * time.Hour), Duration(10 * time.Hour),
		},
	}
}

// WebhookEventTypes is the event catalogue an endpoint may subscribe to
// (docs/webhooks.md): the store's (models/events). webhook.test is not in
// it, as `latchkey webhooks test` sends it to an endpoint whatever its
// events say.
func WebhookEventTypes() []string { return events.Types() }
