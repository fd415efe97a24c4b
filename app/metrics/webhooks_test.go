package metrics_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/metrics"
)

// observer is the webhook worker's Observer, as app/webhooks declares
// it: the metrics must keep satisfying it.
type observer interface {
	Delivered(endpoint string)
	Retrying(endpoint string)
	Failed(endpoint string)
	Backlog(pending int64, oldest time.Duration)
}

// The webhook metrics count deliveries by endpoint and result and show
// the outbox's backlog; they exist at zero before any delivery, and do
// nothing with metrics off.
func TestWebhookMetrics(t *testing.T) {
	var off *metrics.Metrics
	var o observer = off.Webhooks()
	o.Delivered("crm")
	o.Retrying("crm")
	o.Failed("crm")
	o.Backlog(3, time.Minute)

	m := metrics.New(metrics.Build{})
	s := scrapeHandler(t, m)
	require.True(t, s.Has("latchkey_webhook_pending"))
	require.Equal(t, 0.0, s.Value("latchkey_webhook_pending"))
	require.Equal(t, 0.0, s.Value("latchkey_webhook_oldest_pending_seconds"))

	o = m.Webhooks()
	o.Delivered("crm")
	o.Delivered("crm")
	o.Retrying("crm")
	o.Failed("audit")
	o.Backlog(42, 90*time.Second+500*time.Millisecond)
	s = scrapeHandler(t, m)
	require.Equal(t, 2.0, s.Value("latchkey_webhook_deliveries_total", "endpoint", "crm", "result", "delivered"))
	require.Equal(t, 1.0, s.Value("latchkey_webhook_deliveries_total", "endpoint", "crm", "result", "retrying"))
	require.Equal(t, 1.0, s.Value("latchkey_webhook_deliveries_total", "endpoint", "audit", "result", "failed"))
	require.Equal(t, 42.0, s.Value("latchkey_webhook_pending"))
	require.Equal(t, 90.5, s.Value("latchkey_webhook_oldest_pending_seconds"))

	o.Backlog(0, 0)
	s = scrapeHandler(t, m)
	require.Equal(t, 0.0, s.Value("latchkey_webhook_pending"), "a gauge, set on every read of the outbox")
	require.Equal(t, 0.0, s.Value("latchkey_webhook_oldest_pending_seconds"))
}
