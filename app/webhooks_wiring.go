package app

import (
	"fmt"
	"log/slog"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/webhooks"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// webhookOutbox is where the store writes account events for cfg's
// enabled endpoints (docs/webhooks.md); nil when there is none, and then
// no event is written at all. The admin commands' store has it too: an
// operator's `users delete` is reported like a user's own.
func webhookOutbox(cfg config.Config) events.Outbox {
	if !cfg.Webhooks.Enabled() {
		return nil
	}
	active := cfg.Webhooks.Active()
	return webhookstore.NewOutbox(func(eventType string) []string {
		var names []string
		for _, e := range active {
			if e.Wants(eventType) {
				names = append(names, e.Name)
			}
		}
		return names
	})
}

// newDeliverer is the worker sending the outbox's events to cfg's
// enabled endpoints; nil when there is none.
func newDeliverer(cfg config.Config, store *models.Store, m *metrics.Metrics, log *slog.Logger) (*webhooks.Worker, error) {
	if !cfg.Webhooks.Enabled() {
		return nil, nil
	}
	var eps []webhooks.Endpoint
	for _, e := range cfg.Webhooks.Active() {
		eps = append(eps, webhooks.Endpoint{Name: e.Name, URL: e.URL, Secrets: e.Secrets, Events: e.Events, AllowPrivate: e.AllowPrivate})
	}
	set, err := webhooks.NewSet(eps)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	w, err := webhooks.NewWorker(webhooks.WorkerConfig{
		Store:        webhookstore.New(store),
		Sender:       webhooks.NewSender(webhooks.SenderConfig{Timeout: cfg.Webhooks.Timeout.D()}),
		Endpoints:    set,
		Schedule:     webhooks.Schedule{Delays: cfg.Webhooks.Schedule(), Jitter: 0.2},
		PollInterval: cfg.Webhooks.PollInterval.D(),
		PerEndpoint:  cfg.Webhooks.PerEndpointConcurrency,
		Observer:     m.Webhooks(),
		Log:          log,
	})
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return w, nil
}
