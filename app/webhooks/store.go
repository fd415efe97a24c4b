package webhooks

import (
	"context"
	"time"

	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// Store is what the worker needs of the outbox (models/webhookstore
// implements it): claim due deliveries under a lease, record each
// attempt, and the backlog's size for the metrics.
type Store interface {
	Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, endpoints []string) ([]webhookstore.Delivery, error)
	Release(ctx context.Context, d webhookstore.Delivery) error
	FailOrphans(ctx context.Context, known []string, before, now time.Time) (int64, error)
	Delivered(ctx context.Context, d webhookstore.Delivery, status int, at time.Time) error
	Retry(ctx context.Context, d webhookstore.Delivery, status int, errText string, next time.Time) error
	Fail(ctx context.Context, d webhookstore.Delivery, status int, errText string, at time.Time) error
	Stats(ctx context.Context, now time.Time) (webhookstore.Stats, error)
	PurgeDelivered(ctx context.Context, before time.Time) (int64, error)
	PurgeFailed(ctx context.Context, before time.Time) (int64, error)
}

// Observer hears of every attempt's outcome and of the backlog (app/metrics
// implements it as counters and gauges).
type Observer interface {
	Delivered(endpoint string)
	Retrying(endpoint string)
	Failed(endpoint string)
	// Backlog is the pending deliveries and the age of the oldest (0 when
	// none), measured every StatsInterval by each running worker.
	Backlog(pending int64, oldest time.Duration)
}

// nopObserver is the Observer of a worker given none.
type nopObserver struct{}

func (nopObserver) Delivered(string)             {}
func (nopObserver) Retrying(string)              {}
func (nopObserver) Failed(string)                {}
func (nopObserver) Backlog(int64, time.Duration) {}
