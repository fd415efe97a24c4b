package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
	"github.com/latchkey-auth/latchkey/models/storetest"
	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// The worker on the real outbox (models/webhookstore on SQLite, and on
// PostgreSQL where instances race) and a real receiver.

// freshConfig is a new database of the dialect.
func freshConfig(t *testing.T, dialect string) models.Config {
	t.Helper()
	url := ""
	if dialect == models.DialectPostgres {
		url = pg.URL(t)
	}
	return storetest.FreshConfig(t, dialect, url)
}

// queue writes events for set's subscribers in one transaction, as a
// change would.
func queue(t *testing.T, s *models.Store, set *Set, evs ...events.Event) {
	t.Helper()
	o := webhookstore.NewOutbox(set.Subscribers)
	require.NoError(t, s.DB().Transaction(func(tx *gorm.DB) error { return o.Write(tx, evs) }))
}

func someEvents(n int) []events.Event {
	out := make([]events.Event, 0, n)
	for i := range n {
		out = append(out, events.Event{ID: fmt.Sprintf("evt_%04d", i), Type: "session.created", Time: time.Now(),
			Data: map[string]string{"user_id": "u1", "marker": "BODY-MARKER"}})
	}
	return out
}

// counter is an Observer that counts.
type counter struct {
	mu                          sync.Mutex
	delivered, retrying, failed int
	backlogs                    int
}

func (c *counter) Delivered(string) { c.mu.Lock(); c.delivered++; c.mu.Unlock() }
func (c *counter) Retrying(string)  { c.mu.Lock(); c.retrying++; c.mu.Unlock() }
func (c *counter) Failed(string)    { c.mu.Lock(); c.failed++; c.mu.Unlock() }
func (c *counter) Backlog(int64, time.Duration) {
	c.mu.Lock()
	c.backlogs++
	c.mu.Unlock()
}

func (c *counter) counts() (delivered, retrying, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delivered, c.retrying, c.failed
}

// run starts w and returns a stop that cancels it and waits for Run.
func run(t *testing.T, w *Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("worker did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// fixture is a store, an endpoint "crm" at a receiver, and a worker config.
type fixture struct {
	store    *models.Store
	outbox   *webhookstore.Store
	rc       *receiver
	set      *Set
	secret   string
	observer *counter
	// logs is read once the workers stopped; log is its one handler (whose
	// lock serialises the workers' writes).
	logs *bytes.Buffer
	log  *slog.Logger
}

func newFixture(t *testing.T, c models.Config) *fixture {
	t.Helper()
	f := &fixture{store: storetest.Connect(t, c), secret: newSecret(t), observer: &counter{}, logs: &bytes.Buffer{}}
	f.log = slog.New(slog.NewTextHandler(f.logs, nil))
	f.outbox = webhookstore.New(f.store)
	f.rc = newReceiver(t, f.secret)
	var err error
	f.set, err = NewSet([]Endpoint{f.rc.endpoint("crm", f.secret)})
	require.NoError(t, err)
	return f
}

func (f *fixture) worker(t *testing.T, store *models.Store, timeout time.Duration, delays ...time.Duration) *Worker {
	t.Helper()
	w, err := NewWorker(WorkerConfig{
		Store: webhookstore.New(store), Sender: NewSender(SenderConfig{Timeout: timeout}), Endpoints: f.set,
		Schedule: Schedule{Delays: delays}, PollInterval: 10 * time.Millisecond, Observer: f.observer,
		Log: f.log,
	})
	require.NoError(t, err)
	return w
}

func (f *fixture) rows(t *testing.T, id string) []webhookstore.Delivery {
	t.Helper()
	rows, err := f.outbox.Show(t.Context(), id)
	require.NoError(t, err)
	return rows
}

// The receiver answers 500 twice per event, then 200: every event arrives,
// with its one id on every attempt, after two scheduled retries.
func TestWorkerRetriesUntilDelivered(t *testing.T) {
	f := newFixture(t, freshConfig(t, models.DialectSQLite))
	var mu sync.Mutex
	seen := map[string]int{}
	f.rc.answer = func(r received) int {
		mu.Lock()
		defer mu.Unlock()
		seen[r.ID]++
		if seen[r.ID] <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	evs := someEvents(5)
	queue(t, f.store, f.set, evs...)
	stop := run(t, f.worker(t, f.store, time.Second, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond))

	require.Eventually(t, func() bool { return len(f.rc.delivered()) == len(evs) }, 10*time.Second, 10*time.Millisecond)
	f.rc.requireAllVerified()
	for _, ev := range evs {
		require.Eventually(t, func() bool { return f.rows(t, ev.ID)[0].Status == webhookstore.StatusDelivered }, 5*time.Second, 10*time.Millisecond)
		d := f.rows(t, ev.ID)[0]
		require.Equal(t, 3, d.Attempts)
		require.Equal(t, 200, d.LastStatus)
		require.Empty(t, d.LeaseOwner)
	}
	delivered, retrying, failed := f.observer.counts()
	require.Equal(t, 5, delivered)
	require.Equal(t, 10, retrying)
	require.Zero(t, failed)
	stop()
	f.observer.mu.Lock()
	require.Positive(t, f.observer.backlogs, "the backlog is reported from the start")
	f.observer.mu.Unlock()
	require.Contains(t, f.logs.String(), "webhook attempt failed")
}

// An answer slower than the time-out is a failed attempt, retried.
func TestWorkerRetriesATimeOut(t *testing.T) {
	f := newFixture(t, freshConfig(t, models.DialectSQLite))
	var calls atomic.Int32
	f.rc.answer = func(received) int {
		if calls.Add(1) == 1 {
			time.Sleep(time.Second)
		}
		return http.StatusNoContent
	}
	queue(t, f.store, f.set, someEvents(1)...)
	stop := run(t, f.worker(t, f.store, 200*time.Millisecond, 20*time.Millisecond))
	require.Eventually(t, func() bool { return f.rows(t, "evt_0000")[0].Status == webhookstore.StatusDelivered }, 10*time.Second, 10*time.Millisecond)
	d := f.rows(t, "evt_0000")[0]
	require.Equal(t, 2, d.Attempts)
	require.Equal(t, 204, d.LastStatus)
	stop()
	require.Contains(t, f.logs.String(), "no answer within 200ms")
}

// After the last attempt the delivery is failed, with why; the log lines
// say which endpoint, event, type, attempt and status, never the body or a
// secret (nor the URL, whose query may hold one).
func TestWorkerFailsAfterTheScheduleAndLogsNoSecrets(t *testing.T) {
	f := newFixture(t, freshConfig(t, models.DialectSQLite))
	f.rc.answer = func(received) int { return http.StatusBadGateway }
	queue(t, f.store, f.set, someEvents(1)...)
	stop := run(t, f.worker(t, f.store, time.Second, 10*time.Millisecond))
	require.Eventually(t, func() bool { return f.rows(t, "evt_0000")[0].Status == webhookstore.StatusFailed }, 10*time.Second, 10*time.Millisecond)
	stop()

	d := f.rows(t, "evt_0000")[0]
	require.Equal(t, 2, d.Attempts)
	require.Equal(t, 502, d.LastStatus)
	require.Contains(t, d.LastError, "502")
	_, retrying, failed := f.observer.counts()
	require.Equal(t, 1, retrying)
	require.Equal(t, 1, failed)

	logs := f.logs.String()
	for _, want := range []string{"endpoint=crm", "event_id=evt_0000", "type=session.created", "attempt=1", "attempt=2", "status=502", "retries spent"} {
		require.Contains(t, logs, want)
	}
	for _, never := range []string{"BODY-MARKER", f.secret, f.secret[len("whsec_"):], "url-secret"} {
		require.NotContains(t, logs, never)
		require.NotContains(t, d.LastError, never)
	}
}

// A delivery queued for an endpoint this instance does not have is not
// claimed: another instance of a rolling config change may have it. Once
// its retries would have been spent it fails, with that reason, having
// reached nobody.
func TestWorkerLeavesDeliveriesToAnUnknownEndpoint(t *testing.T) {
	f := newFixture(t, freshConfig(t, models.DialectSQLite))
	old, err := NewSet([]Endpoint{f.rc.endpoint("removed", f.secret)})
	require.NoError(t, err)
	stale, fresh := someEvents(2)[0], someEvents(2)[1]
	stale.Time = time.Now().Add(-2 * time.Hour) // older than the 1 h schedule below
	queue(t, f.store, old, stale, fresh)
	run(t, f.worker(t, f.store, time.Second, time.Hour))
	require.Eventually(t, func() bool { return f.rows(t, stale.ID)[0].Status == webhookstore.StatusFailed }, 10*time.Second, 10*time.Millisecond)
	d := f.rows(t, stale.ID)[0]
	require.Equal(t, webhookstore.ReasonOrphan, d.LastError)
	require.Zero(t, d.Attempts, "never sent")
	time.Sleep(100 * time.Millisecond) // ten polls
	d = f.rows(t, fresh.ID)[0]
	require.Equal(t, webhookstore.StatusPending, d.Status, "a recent one waits for an instance that has its endpoint")
	require.Empty(t, d.LeaseOwner)
	require.Empty(t, f.rc.requests())
}

// Nudge delivers at once, without waiting for the poll.
func TestWorkerNudge(t *testing.T) {
	f := newFixture(t, freshConfig(t, models.DialectSQLite))
	w, err := NewWorker(WorkerConfig{Store: f.outbox, Sender: NewSender(SenderConfig{}), Endpoints: f.set, PollInterval: time.Hour})
	require.NoError(t, err)
	run(t, w)
	time.Sleep(50 * time.Millisecond) // the first look at the outbox has passed
	queue(t, f.store, f.set, someEvents(1)...)
	w.Nudge()
	require.Eventually(t, func() bool { return len(f.rc.delivered()) == 1 }, 5*time.Second, 5*time.Millisecond)
}

// A stop waits for the attempt in flight and records it: nothing is left
// leased for another worker to send again.
func TestWorkerStopFinishesTheAttemptInFlight(t *testing.T) {
	f := newFixture(t, freshConfig(t, models.DialectSQLite))
	arrived := make(chan struct{})
	f.rc.answer = func(received) int { close(arrived); time.Sleep(300 * time.Millisecond); return http.StatusOK }
	queue(t, f.store, f.set, someEvents(1)...)
	stop := run(t, f.worker(t, f.store, 5*time.Second, time.Second))
	<-arrived
	stop()
	d := f.rows(t, "evt_0000")[0]
	require.Equal(t, webhookstore.StatusDelivered, d.Status)
	require.Empty(t, d.LeaseOwner)
}

// Two instances' workers on one outbox deliver every event, each once,
// and never one event at the same time as the other (counted at the
// receiver, by id and overlap).
func TestTwoWorkersNeverDeliverAnEventTwiceAtOnce(t *testing.T) {
	for _, dialect := range storetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			c := freshConfig(t, dialect)
			f := newFixture(t, c)
			other := storetest.Connect(t, c)

			var mu sync.Mutex
			inFlight := map[string]int{}
			var overlaps []string
			f.rc.answer = func(r received) int {
				mu.Lock()
				inFlight[r.ID]++
				if inFlight[r.ID] > 1 {
					overlaps = append(overlaps, r.ID)
				}
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				inFlight[r.ID]--
				mu.Unlock()
				return http.StatusOK
			}
			const n = 300
			queue(t, f.store, f.set, someEvents(n)...)

			a := &counter{}
			b := &counter{}
			wa, wb := f.worker(t, f.store, 5*time.Second, time.Second), f.worker(t, other, 5*time.Second, time.Second)
			wa.c.Observer, wb.c.Observer = a, b
			run(t, wa)
			run(t, wb)

			require.Eventually(t, func() bool { return len(f.rc.delivered()) == n }, 60*time.Second, 20*time.Millisecond)
			f.rc.requireAllVerified()
			for id, times := range f.rc.delivered() {
				require.Equal(t, 1, times, id)
			}
			mu.Lock()
			require.Empty(t, overlaps)
			mu.Unlock()
			var da, db int
			require.Eventually(t, func() bool {
				da, _, _ = a.counts()
				db, _, _ = b.counts()
				return da+db == n
			}, 10*time.Second, 10*time.Millisecond, "every attempt recorded")
			require.Positive(t, da, "both instances deliver")
			require.Positive(t, db, "both instances deliver")
			st, err := f.outbox.Stats(t.Context(), time.Now())
			require.NoError(t, err)
			require.Zero(t, st.Pending)
		})
	}
}

// A failed delivery nobody retried is deleted after its retention (its
// event carries personal data); a younger one waits for the operator.
func TestWorkerDeletesFailedDeliveriesAfterTheirRetention(t *testing.T) {
	f := newFixture(t, freshConfig(t, models.DialectSQLite))
	queue(t, f.store, f.set, someEvents(2)...)
	got, err := f.outbox.Claim(t.Context(), "w0", time.Now(), time.Minute, 10, f.set.Names())
	require.NoError(t, err)
	require.Len(t, got, 2)
	failedAt := map[string]time.Time{
		"evt_0000": time.Now().Add(-webhookstore.FailedRetention - time.Hour),
		"evt_0001": time.Now().Add(-webhookstore.FailedRetention + time.Hour),
	}
	for _, d := range got {
		require.NoError(t, f.outbox.Fail(t.Context(), d, 503, "down", failedAt[d.EventID]))
	}
	stop := run(t, f.worker(t, f.store, time.Second, time.Hour))
	require.Eventually(t, func() bool {
		_, err := f.outbox.Show(t.Context(), "evt_0000")
		return errors.Is(err, models.ErrNotFound)
	}, 10*time.Second, 10*time.Millisecond)
	stop()
	require.Equal(t, webhookstore.StatusFailed, f.rows(t, "evt_0001")[0].Status, "inside its retention")
	require.Contains(t, f.logs.String(), "count=1")
	require.Empty(t, f.rc.requests())
}

// A receiver that hangs holds at most PerEndpoint of the worker's slots:
// another endpoint's event, queued behind a backlog of the hanging one's,
// arrives at once instead of after the hanging attempts' time-out.
func TestWorkerBoundsEachEndpointsAttemptsInFlight(t *testing.T) {
	for _, dialect := range storetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			f := newFixture(t, freshConfig(t, dialect))
			var mu sync.Mutex
			var inFlight, most, calls int
			hang := make(chan struct{})
			release := sync.OnceFunc(func() { close(hang) })
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				select {
				case <-hang:
				case <-r.Context().Done():
				}
				mu.Lock()
				inFlight--
				mu.Unlock()
				w.WriteHeader(http.StatusOK)
			}))
			t.Cleanup(slow.Close)
			hung, err := NewSet([]Endpoint{{Name: "slow", URL: slow.URL + "/hook", Secrets: []string{f.secret}}})
			require.NoError(t, err)
			f.set, err = NewSet([]Endpoint{hung.All()[0], f.rc.endpoint("crm", f.secret)})
			require.NoError(t, err)
			backlog := someEvents(30)
			for i := range backlog {
				backlog[i].Time = time.Now().Add(-time.Minute) // due before crm's
			}
			queue(t, f.store, hung, backlog...)
			crm, err := NewSet([]Endpoint{f.rc.endpoint("crm", f.secret)})
			require.NoError(t, err)
			ev := events.Event{ID: "evt_crm", Type: "session.created", Time: time.Now(), Data: map[string]string{"user_id": "u2"}}
			queue(t, f.store, crm, ev)

			w := f.worker(t, f.store, 30*time.Second, time.Hour)
			stop := run(t, w)
			t.Cleanup(release) // runs first: the hanging attempts end, the worker stops
			require.Eventually(t, func() bool { return f.rc.delivered()["evt_crm"] == 1 }, 3*time.Second, 5*time.Millisecond,
				"crm's event waits behind the hanging endpoint's attempts")
			require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return inFlight == 4 }, 3*time.Second, 5*time.Millisecond)
			mu.Lock()
			require.Equal(t, 4, most, "attempts in flight to the hanging endpoint")
			require.Equal(t, 4, calls)
			mu.Unlock()
			var leased int64
			require.NoError(t, f.store.DB().Model(&webhookstore.Delivery{}).Where("endpoint = ? AND lease_owner <> ''", "slow").Count(&leased).Error)
			require.EqualValues(t, 4, leased, "the rest of the backlog waits unleased, for any worker")
			release()
			stop()
		})
	}
}
