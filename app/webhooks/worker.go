package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// Worker defaults.
const (
	DefaultPollInterval = time.Second
	DefaultConcurrency  = 16
	// DefaultPerEndpoint is the attempts in flight to one endpoint: a
	// receiver that hangs holds this many slots for its time-out, and the
	// other endpoints' events keep the rest (Svix and Standard Webhooks
	// senders throttle per endpoint too).
	DefaultPerEndpoint = 4
	// leaseMargin is added to the attempt's time-out for the lease: the
	// attempt and its record finish well within it, so no other worker
	// claims a delivery still in flight.
	leaseMargin = 30 * time.Second
	// StatsInterval is how often a worker reports the backlog.
	StatsInterval = 15 * time.Second
	// purgeInterval is how often a worker purges old delivered rows.
	purgeInterval = time.Hour
)

// reasonGone is the failure of a delivery to an endpoint no longer
// configured (removed or disabled).
const reasonGone = "endpoint not configured"

// WorkerConfig is a Worker's dependencies and settings; zero values are
// the defaults.
type WorkerConfig struct {
	Store     Store
	Sender    *Sender
	Endpoints *Set
	Schedule  Schedule // DefaultSchedule when it has no delays
	// PollInterval is how often the outbox is looked at without a Nudge.
	PollInterval time.Duration
	// Concurrency bounds the attempts in flight.
	Concurrency int
	// PerEndpoint bounds the attempts in flight to one endpoint, on this
	// worker (default DefaultPerEndpoint, at most Concurrency).
	PerEndpoint int
	// Owner names this worker in the leases it takes; unique per worker
	// (default: host name, process id and a random part).
	Owner    string
	Observer Observer
	Log      *slog.Logger
	Now      func() time.Time
}

// Worker drains the outbox in the background: it claims due deliveries
// (a lease, so any number of workers on any instances share the outbox
// without delivering one at the same time), sends them, and records the
// outcome. Nothing on a request path waits for it.
type Worker struct {
	c       WorkerConfig
	lease   time.Duration
	slots   chan struct{} // one per attempt in flight
	nudge   chan struct{}
	backlog atomic.Bool // the last claim was full: claim again when a slot frees
	down    bool        // the last claim failed (Run's goroutine only)

	mu   sync.Mutex
	busy map[string]int // attempts in flight per endpoint
}

// NewWorker checks c and builds a Worker; Run starts it.
func NewWorker(c WorkerConfig) (*Worker, error) {
	if c.Store == nil || c.Sender == nil || c.Endpoints == nil {
		return nil, errors.New("webhook worker: store, sender and endpoints are required")
	}
	if len(c.Schedule.Delays) == 0 {
		c.Schedule = DefaultSchedule()
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.PerEndpoint <= 0 {
		c.PerEndpoint = DefaultPerEndpoint
	}
	c.PerEndpoint = min(c.PerEndpoint, c.Concurrency)
	if c.Owner == "" {
		host, _ := os.Hostname()
		c.Owner = fmt.Sprintf("%s:%d:%s", host, os.Getpid(), random.Hex(4))
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Worker{
		c:     c,
		lease: c.Sender.Timeout() + leaseMargin,
		slots: make(chan struct{}, c.Concurrency),
		nudge: make(chan struct{}, 1),
		busy:  map[string]int{},
	}, nil
}

// Nudge asks the worker to look at the outbox now instead of at the next
// poll (after a change wrote events). It never blocks.
func (w *Worker) Nudge() {
	select {
	case w.nudge <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight
// (each bounded by the Sender's time-out) to finish and be recorded, so a
// stop loses no outcome; an attempt cut short would only be sent again by
// another worker after its lease.
func (w *Worker) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(w.c.PollInterval)
	defer tick.Stop()
	var lastStats, lastPurge time.Time
	for {
		w.fill(ctx, &wg)
		if now := w.c.Now(); now.Sub(lastStats) >= StatsInterval {
			lastStats = now
			w.reportBacklog(ctx, now)
		}
		if now := w.c.Now(); now.Sub(lastPurge) >= purgeInterval {
			lastPurge = now
			w.purge(ctx, now)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-w.nudge:
		}
	}
}

// fill claims as many due deliveries as there are free slots, of the
// endpoints below their PerEndpoint bound, and starts an attempt for each.
// Only Run's goroutine takes slots, so a free slot counted here is still
// free when taken.
func (w *Worker) fill(ctx context.Context, wg *sync.WaitGroup) {
	free := cap(w.slots) - len(w.slots)
	if free == 0 || ctx.Err() != nil {
		return
	}
	open := w.open()
	if len(open) == 0 {
		return
	}
	claimed, err := w.c.Store.Claim(ctx, w.c.Owner, w.c.Now(), w.lease, free, open)
	switch {
	case err != nil && ctx.Err() == nil && !w.down:
		w.down = true // logged once per outage, not once per poll
		w.c.Log.Error("webhooks: claim deliveries; events stay queued until the database answers", "error", err)
		return
	case err != nil:
		return
	case w.down:
		w.down = false
		w.c.Log.Info("webhooks: claiming deliveries again")
	}
	w.backlog.Store(len(claimed) == free)
	claimed = w.keep(ctx, claimed)
	for _, d := range claimed {
		w.slots <- struct{}{}
		wg.Go(func() {
			defer w.done(d.Endpoint)
			// The attempt outlives a stop (see Run), bounded by its time-out.
			w.attempt(context.WithoutCancel(ctx), d)
		})
	}
}

// open is the endpoints with fewer than PerEndpoint attempts in flight:
// those whose deliveries fill may claim.
func (w *Worker) open() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, name := range w.c.Endpoints.Names() {
		if w.busy[name] < w.c.PerEndpoint {
			out = append(out, name)
		}
	}
	return out
}

// keep counts the claimed deliveries each endpoint can take in flight and
// releases the rest (one claim may return a backlog of one endpoint's),
// then asks for another claim, which leaves out the endpoints now full.
func (w *Worker) keep(ctx context.Context, claimed []webhookstore.Delivery) []webhookstore.Delivery {
	var kept, over []webhookstore.Delivery
	w.mu.Lock()
	for _, d := range claimed {
		if w.busy[d.Endpoint] < w.c.PerEndpoint {
			w.busy[d.Endpoint]++
			kept = append(kept, d)
		} else {
			over = append(over, d)
		}
	}
	w.mu.Unlock()
	for _, d := range over {
		if err := w.c.Store.Release(ctx, d); err != nil && ctx.Err() == nil {
			// Its lease expires instead: sent late, not lost.
			w.c.Log.Error("webhooks: release a delivery", "endpoint", d.Endpoint, "event_id", d.EventID, "error", err)
		}
	}
	if len(over) > 0 {
		w.Nudge()
	}
	return kept
}

// done frees an attempt's slot and its place in its endpoint's bound, and
// asks for a claim when more may be waiting: the last claim was full, or
// the endpoint was at its bound (its backlog was left out of claims).
func (w *Worker) done(endpoint string) {
	w.mu.Lock()
	full := w.busy[endpoint] >= w.c.PerEndpoint
	if w.busy[endpoint]--; w.busy[endpoint] <= 0 {
		delete(w.busy, endpoint)
	}
	w.mu.Unlock()
	<-w.slots
	if full || w.backlog.Load() {
		w.Nudge()
	}
}

// reportBacklog tells the Observer the outbox's backlog.
func (w *Worker) reportBacklog(ctx context.Context, now time.Time) {
	st, err := w.c.Store.Stats(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			w.c.Log.Error("webhooks: backlog", "error", err)
		}
		return
	}
	var oldest time.Duration
	if !st.OldestPending.IsZero() {
		oldest = max(now.Sub(st.OldestPending), 0)
	}
	w.c.Observer.Backlog(st.Pending, oldest)
}

// purge deletes delivered and failed rows past their retention, and fails
// the rows of endpoints no longer configured once their retries would be
// spent.
func (w *Worker) purge(ctx context.Context, now time.Time) {
	if _, err := w.c.Store.PurgeDelivered(ctx, now.Add(-webhookstore.DeliveredRetention)); err != nil && ctx.Err() == nil {
		w.c.Log.Error("webhooks: purge delivered", "error", err)
	}
	gone, err := w.c.Store.PurgeFailed(ctx, now.Add(-webhookstore.FailedRetention))
	if err != nil && ctx.Err() == nil {
		w.c.Log.Error("webhooks: purge failed", "error", err)
	}
	if gone > 0 {
		w.c.Log.Warn("webhooks: failed deliveries never retried are deleted", "count", gone, "after", webhookstore.FailedRetention)
	}
	n, err := w.c.Store.FailOrphans(ctx, w.c.Endpoints.Names(), now.Add(-w.c.Schedule.Span()), now)
	if err != nil && ctx.Err() == nil {
		w.c.Log.Error("webhooks: fail deliveries of removed endpoints", "error", err)
	}
	if n > 0 {
		w.c.Log.Warn("webhooks: deliveries failed, their endpoint is not configured", "count", n)
	}
}
