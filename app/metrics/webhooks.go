package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Webhook delivery results, the values of the result label.
const (
	WebhookDelivered = "delivered"
	WebhookRetrying  = "retrying"
	WebhookFailed    = "failed"
)

// Webhooks is the webhook worker's metrics; it implements the worker's
// Observer (app/webhooks) without this package knowing the worker. The
// endpoint label is a configured endpoint name, a bounded set.
type Webhooks struct {
	deliveries    *prometheus.CounterVec // endpoint, result
	pending       prometheus.Gauge
	oldestPending prometheus.Gauge
}

// newWebhooks registers the webhook metrics on m's registry. They exist
// (at zero) without endpoints too, so that dashboards and alerts need not
// know whether an instance has webhooks configured.
func newWebhooks(r *prometheus.Registry) *Webhooks {
	w := &Webhooks{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "latchkey_webhook_deliveries_total",
			Help: "Webhook delivery attempts by endpoint and result: delivered (2xx), retrying (failed, another attempt is scheduled) or failed (failed after the last retry; `latchkey webhooks retry-failed` queues it again).",
		}, []string{"endpoint", "result"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "latchkey_webhook_pending",
			Help: "Webhook deliveries waiting to be sent or retried, all endpoints and instances (the outbox, as this instance last read it).",
		}),
		oldestPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "latchkey_webhook_oldest_pending_seconds",
			Help: "Age of the oldest webhook delivery still pending, 0 when none: a receiver that has been down grows it.",
		}),
	}
	r.MustRegister(w.deliveries, w.pending, w.oldestPending)
	return w
}

// Webhooks returns the webhook metrics (nil when m is nil; its methods
// then do nothing).
func (m *Metrics) Webhooks() *Webhooks {
	if m == nil {
		return nil
	}
	return m.webhooks
}

// Delivered counts a delivery the endpoint answered with a 2xx.
func (w *Webhooks) Delivered(endpoint string) { w.count(endpoint, WebhookDelivered) }

// Retrying counts a failed attempt that will be tried again.
func (w *Webhooks) Retrying(endpoint string) { w.count(endpoint, WebhookRetrying) }

// Failed counts a delivery given up after its last retry: an alert on its
// rate finds a receiver that stayed down.
func (w *Webhooks) Failed(endpoint string) { w.count(endpoint, WebhookFailed) }

func (w *Webhooks) count(endpoint, result string) {
	if w != nil {
		w.deliveries.WithLabelValues(endpoint, result).Inc()
	}
}

// Backlog sets the outbox gauges: the deliveries pending and how long the
// oldest of them has waited (0: none).
func (w *Webhooks) Backlog(pending int64, oldest time.Duration) {
	if w == nil {
		return
	}
	w.pending.Set(float64(pending))
	w.oldestPending.Set(max(oldest, 0).Seconds())
}
