package webhooks

import (
	"context"
	"errors"
	"log/slog"

	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// attempt sends one claimed delivery and records the outcome: 2xx
// delivered; anything else a retry by the schedule, or failed after the
// last attempt; an endpoint no longer configured fails at once.
func (w *Worker) attempt(ctx context.Context, d webhookstore.Delivery) {
	log := w.c.Log.With("endpoint", d.Endpoint, "event_id", d.EventID, "type", d.Type, "attempt", d.Attempt())
	ep, ok := w.c.Endpoints.Get(d.Endpoint)
	if !ok {
		w.record(log, "fail", w.c.Store.Fail(ctx, d, 0, reasonGone, w.c.Now()))
		w.c.Observer.Failed(d.Endpoint)
		log.Warn("webhook failed", "status", 0, "error", reasonGone)
		return
	}
	status, err := w.c.Sender.Send(ctx, ep, d.EventID, d.Type, d.Body)
	now := w.c.Now()
	if err == nil {
		w.record(log, "delivered", w.c.Store.Delivered(ctx, d, status, now))
		w.c.Observer.Delivered(d.Endpoint)
		return
	}
	if next, more := w.c.Schedule.Next(d.Attempt(), d.CreatedAt, now); more {
		w.record(log, "retry", w.c.Store.Retry(ctx, d, status, err.Error(), next))
		w.c.Observer.Retrying(d.Endpoint)
		log.Warn("webhook attempt failed", "status", status, "error", err, "next_at", next)
		return
	}
	w.record(log, "fail", w.c.Store.Fail(ctx, d, status, err.Error(), now))
	w.c.Observer.Failed(d.Endpoint)
	log.Error("webhook failed: retries spent", "status", status, "error", err)
}

// record logs a record's failure. A lost lease means this attempt ran past
// it and another worker holds the delivery: its record stands, this one is
// dropped (the receiver may see the event twice, which at-least-once
// allows and the event id lets it detect).
func (w *Worker) record(log *slog.Logger, what string, err error) {
	switch {
	case err == nil:
	case errors.Is(err, webhookstore.ErrLeaseLost):
		log.Warn("webhook outcome dropped: lease lost", "outcome", what)
	default:
		log.Error("webhook outcome not recorded", "outcome", what, "error", err)
	}
}
