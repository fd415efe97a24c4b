package webhookstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

const lease = time.Minute

// known are the endpoints the claiming workers have configured.
var known = []string{"crm", "audit"}

// claim claims up to 10 rows due at now for owner, with no error.
func claim(t *testing.T, s *Store, owner string, now time.Time) []Delivery {
	t.Helper()
	got, err := s.Claim(t.Context(), owner, now, lease, 10, known)
	require.NoError(t, err)
	return got
}

func TestClaimTakesDueRowsOnly(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		write(t, s, event("evt_now", "session.created", whNow), event("evt_later", "session.created", whNow.Add(time.Hour)))

		got := claim(t, s, "w1", whNow)
		require.Len(t, got, 1)
		d := got[0]
		require.Equal(t, "evt_now", d.EventID)
		require.Equal(t, "w1", d.LeaseOwner)
		require.NotNil(t, d.LeaseUntil)
		require.Equal(t, models.DBTime(whNow.Add(lease)), d.LeaseUntil.UTC())
		require.Equal(t, 1, d.Attempt())
		require.NotEmpty(t, d.Body)

		// Held: nobody else gets it while the lease runs.
		again := claim(t, s, "w2", whNow.Add(lease-time.Second))
		require.Empty(t, again)
	})
}

// A worker killed mid-delivery leaves its lease: once it has expired,
// another worker claims the row, and the dead one's late record is lost.
func TestExpiredLeaseIsReclaimable(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		write(t, s, event("evt_1", "session.created", whNow))
		first := claim(t, s, "dead", whNow)
		require.Len(t, first, 1)

		later := whNow.Add(lease + time.Second)
		second := claim(t, s, "alive", later)
		require.Len(t, second, 1)
		require.Equal(t, "alive", second[0].LeaseOwner)

		// The stale owner's record changes nothing.
		require.ErrorIs(t, s.Delivered(ctx, first[0], 200, later), ErrLeaseLost)
		require.ErrorIs(t, s.Retry(ctx, first[0], 500, "x", later), ErrLeaseLost)
		require.ErrorIs(t, s.Fail(ctx, first[0], 500, "x", later), ErrLeaseLost)
		rows, err := s.Show(ctx, "evt_1")
		require.NoError(t, err)
		require.Equal(t, StatusPending, rows[0].Status)
		require.Equal(t, 0, rows[0].Attempts)
		require.Equal(t, "alive", rows[0].LeaseOwner)

		require.NoError(t, s.Delivered(ctx, second[0], 204, later))
		rows, err = s.Show(ctx, "evt_1")
		require.NoError(t, err)
		d := rows[0]
		require.Equal(t, StatusDelivered, d.Status)
		require.Equal(t, 1, d.Attempts)
		require.Equal(t, 204, d.LastStatus)
		require.Empty(t, d.LeaseOwner)
		require.Nil(t, d.LeaseUntil)
		require.NotNil(t, d.DeliveredAt)
		require.Equal(t, models.DBTime(later), d.DeliveredAt.UTC())

		// Delivered is final: no claim, and the dead owner still cannot touch it.
		none := claim(t, s, "w3", later.Add(time.Hour))
		require.Empty(t, none)
		require.ErrorIs(t, s.Retry(ctx, second[0], 500, "x", later), ErrLeaseLost)
	})
}

func TestRetryAndFail(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		write(t, s, event("evt_1", "session.created", whNow))
		got := claim(t, s, "w1", whNow)
		next := whNow.Add(5 * time.Second)
		require.NoError(t, s.Retry(ctx, got[0], 500, "endpoint answered 500", next))

		rows, err := s.Show(ctx, "evt_1")
		require.NoError(t, err)
		d := rows[0]
		require.Equal(t, StatusPending, d.Status)
		require.Equal(t, 1, d.Attempts)
		require.Equal(t, 500, d.LastStatus)
		require.Equal(t, "endpoint answered 500", d.LastError)
		require.Equal(t, models.DBTime(next), d.NextAt.UTC())
		require.Empty(t, d.LeaseOwner)
		require.Nil(t, d.LeaseUntil)

		// Not before next_at, then again, with its attempts counted.
		early := claim(t, s, "w2", next.Add(-time.Millisecond))
		require.Empty(t, early)
		got = claim(t, s, "w2", next)
		require.Len(t, got, 1)
		require.Equal(t, 2, got[0].Attempt())
		require.NoError(t, s.Fail(ctx, got[0], 0, "dial: refused", next))

		st, err := s.Stats(ctx, next)
		require.NoError(t, err)
		require.Equal(t, Stats{Failed: 1}, st)
		none := claim(t, s, "w3", next.Add(time.Hour))
		require.Empty(t, none, "a failed row waits for an operator")

		// The operator's retry: a fresh schedule, due now.
		n, err := s.RetryEvent(ctx, "evt_1", next.Add(time.Hour))
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		n, err = s.RetryEvent(ctx, "evt_1", next.Add(time.Hour))
		require.NoError(t, err)
		require.Zero(t, n, "only failed rows are requeued")
		got = claim(t, s, "w3", next.Add(time.Hour))
		require.Len(t, got, 1)
		require.Equal(t, 1, got[0].Attempt())
		require.Equal(t, "dial: refused", got[0].LastError)
	})
}

func TestLongErrorsAreCut(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		write(t, s, event("evt_1", "session.created", whNow))
		got := claim(t, s, "w1", whNow)
		long := ""
		for len(long) < 2*maxErrorLen {
			long += "é"
		}
		require.NoError(t, s.Retry(ctx, got[0], 0, "x"+long, whNow))
		rows, err := s.Show(ctx, "evt_1")
		require.NoError(t, err)
		require.LessOrEqual(t, len(rows[0].LastError), maxErrorLen)
		require.Greater(t, len(rows[0].LastError), maxErrorLen-2)
	})
}

// Two instances (two handles on one database) claiming all at once never
// get the same row, and between them claim every row.
func TestConcurrentClaimersNeverShareARow(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		a, b := connect(t, c), connect(t, c)
		const n = 200
		evs := make([]events.Event, 0, n)
		for i := range n {
			evs = append(evs, event(fmt.Sprintf("evt_%03d", i), "session.created", whNow.Add(-time.Duration(i)*time.Millisecond)))
		}
		write(t, a, evs...)

		var (
			mu     sync.Mutex
			owners = map[string]string{}
			wg     sync.WaitGroup
			errs   = make(chan error, 8)
		)
		start := make(chan struct{})
		for i := range 8 {
			s := a
			if i%2 == 1 {
				s = b
			}
			owner := fmt.Sprintf("w%d", i)
			wg.Go(func() {
				<-start
				for {
					got, err := s.Claim(context.Background(), owner, whNow, lease, 7, known)
					if err != nil {
						errs <- err
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, d := range got {
						if prev, ok := owners[d.EventID]; ok {
							errs <- fmt.Errorf("%s claimed by %s and %s", d.EventID, prev, owner)
						}
						owners[d.EventID] = owner
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, owners, n)
	})
}

func TestListPagesNewestFirst(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		for i := range 5 {
			write(t, s, event(fmt.Sprintf("evt_%d", i), "user.deleted", whNow.Add(time.Duration(i)*time.Second)))
		}
		var seen []string
		f := Filter{Limit: 3}
		for {
			page, err := s.List(ctx, f)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			for _, d := range page {
				seen = append(seen, d.EventID+"/"+d.Endpoint)
			}
			c, err := ParseCursor(page[len(page)-1].Cursor().String())
			require.NoError(t, err)
			f.Before = c
		}
		require.Equal(t, []string{
			"evt_4/crm", "evt_4/audit", "evt_3/crm", "evt_3/audit", "evt_2/crm",
			"evt_2/audit", "evt_1/crm", "evt_1/audit", "evt_0/crm", "evt_0/audit",
		}, seen)

		only, err := s.List(ctx, Filter{Endpoint: "audit", Status: StatusPending, Limit: 2})
		require.NoError(t, err)
		require.Len(t, only, 2)
		require.Equal(t, "evt_4", only[0].EventID)
		none, err := s.List(ctx, Filter{Status: StatusFailed})
		require.NoError(t, err)
		require.Empty(t, none)
	})
}

func TestStatsRetryFailedAndPurge(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		write(t, s, event("evt_1", "session.created", whNow), event("evt_2", "session.created", whNow.Add(time.Second)),
			event("evt_3", "session.created", whNow.Add(2*time.Second)))
		got := claim(t, s, "w1", whNow.Add(time.Second))
		require.Len(t, got, 2)
		for _, d := range got {
			if d.EventID == "evt_1" {
				require.NoError(t, s.Delivered(ctx, d, 200, whNow.Add(time.Second)))
			} else {
				require.NoError(t, s.Fail(ctx, d, 410, "gone", whNow.Add(time.Second)))
			}
		}
		st, err := s.Stats(ctx, whNow.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, int64(1), st.Pending)
		require.Equal(t, int64(1), st.Failed)
		require.Equal(t, models.DBTime(whNow.Add(2*time.Second)), st.OldestPending.UTC())
		st, err = s.Stats(ctx, whNow)
		require.NoError(t, err)
		require.Equal(t, models.DBTime(whNow), st.OldestPending.UTC(), "never later than now")

		n, err := s.RetryFailed(ctx, whNow.Add(time.Minute))
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		st, err = s.Stats(ctx, whNow.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, int64(2), st.Pending)
		require.Zero(t, st.Failed)

		n, err = s.PurgeDelivered(ctx, whNow.Add(time.Second))
		require.NoError(t, err)
		require.Zero(t, n, "delivered at the cut-off: kept")
		n, err = s.PurgeDelivered(ctx, whNow.Add(DeliveredRetention))
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		_, err = s.Show(ctx, "evt_1")
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.Show(ctx, "evt_2")
		require.NoError(t, err)
	})
}

// A delivery an operator queued again has waited since the retry, not
// since its event: the backlog's age does not jump to the event's.
func TestStatsCountsARetryFromTheRetry(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		old := whNow.Add(-72 * time.Hour)
		write(t, s, event("evt_old", "user.created", old))
		got := claim(t, s, "w1", old)
		require.Len(t, got, 1)
		require.NoError(t, s.Fail(ctx, got[0], 503, "down", old.Add(time.Hour)))
		n, err := s.RetryFailed(ctx, whNow)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)

		write(t, s, event("evt_new", "user.created", whNow.Add(time.Minute)))
		st, err := s.Stats(ctx, whNow.Add(2*time.Minute))
		require.NoError(t, err)
		require.Equal(t, int64(2), st.Pending)
		require.Equal(t, models.DBTime(whNow), st.OldestPending.UTC(), "the retry's time, not the event's")

		got = claim(t, s, "w1", whNow.Add(2*time.Minute))
		require.Len(t, got, 2)
		for _, d := range got {
			if d.EventID == "evt_old" {
				require.NoError(t, s.Retry(ctx, d, 503, "still down", whNow.Add(time.Hour)))
			}
		}
		st, err = s.Stats(ctx, whNow.Add(3*time.Minute))
		require.NoError(t, err)
		require.Equal(t, models.DBTime(whNow), st.OldestPending.UTC(), "a failed attempt after the retry keeps counting from it")
	})
}

// Claim takes only the endpoints the worker names; FailOrphans ends the
// others' rows written before its cut-off, and only those.
func TestClaimKnownEndpointsAndFailOrphans(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		write(t, s, event("evt_old", "user.deleted", whNow.Add(-2*time.Hour)), event("evt_new", "user.deleted", whNow))
		got, err := s.Claim(t.Context(), "w1", whNow, lease, 10, []string{"crm"})
		require.NoError(t, err)
		require.Len(t, got, 2, "crm's rows only, not audit's")
		for _, d := range got {
			require.Equal(t, "crm", d.Endpoint)
		}
		n, err := s.FailOrphans(t.Context(), []string{"crm"}, whNow.Add(-time.Hour), whNow)
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "audit's old row")
		old, err := s.Show(t.Context(), "evt_old")
		require.NoError(t, err)
		for _, d := range old {
			if d.Endpoint == "audit" {
				require.Equal(t, StatusFailed, d.Status)
				require.Equal(t, ReasonOrphan, d.LastError)
			}
		}
		got, err = s.Claim(t.Context(), "w2", whNow, lease, 10, []string{"audit"})
		require.NoError(t, err)
		require.Len(t, got, 1, "audit's recent row is still pending")
		require.Equal(t, "evt_new", got[0].EventID)
	})
}

// A delivery an operator re-queues (`webhooks retry`) is due now: an
// instance whose config lacks its endpoint (mid-rollout) leaves it pending
// for the instances that have it, however old its event, instead of
// failing it again at its next purge.
func TestFailOrphansSparesRequeued(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		const span = 24 * time.Hour
		created := whNow.Add(-3 * span)
		write(t, s, event("evt_old", "user.deleted", created))
		n, err := s.FailOrphans(t.Context(), []string{"crm"}, created.Add(span), created.Add(2*span))
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "audit's delivery, while no instance had audit")

		n, err = s.RetryEvent(t.Context(), "evt_old", whNow)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		n, err = s.FailOrphans(t.Context(), []string{"crm"}, whNow.Add(-span), whNow)
		require.NoError(t, err)
		require.Zero(t, n, "an instance without audit ran its purge")

		got, err := s.Claim(t.Context(), "w1", whNow, lease, 10, []string{"audit"})
		require.NoError(t, err)
		require.Len(t, got, 1, "the re-queued delivery is still pending for an instance with audit")
		require.Equal(t, "evt_old", got[0].EventID)
	})
}

// A delivery in flight on an instance that has its endpoint is not failed
// by the purge of one that lacks it (mid-rollout), however long the row
// waited to be sent: the attempt's outcome is what the row records. A
// lease that expired (its worker died) no longer protects it.
func TestFailOrphansSparesLeased(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		const span = 24 * time.Hour
		write(t, s, event("evt_old", "user.deleted", whNow.Add(-2*span)))
		got, err := s.Claim(t.Context(), "w1", whNow, lease, 10, []string{"audit"})
		require.NoError(t, err)
		require.Len(t, got, 1)
		n, err := s.FailOrphans(t.Context(), []string{"crm"}, whNow.Add(-span), whNow.Add(time.Second))
		require.NoError(t, err)
		require.Zero(t, n, "audit's delivery is in flight on w1")
		require.NoError(t, s.Delivered(t.Context(), got[0], 204, whNow.Add(2*time.Second)), "w1 records its answer")

		write(t, s, event("evt_older", "user.deleted", whNow.Add(-3*span)))
		got, err = s.Claim(t.Context(), "w2", whNow, lease, 10, []string{"audit"})
		require.NoError(t, err)
		require.Len(t, got, 1)
		n, err = s.FailOrphans(t.Context(), []string{"crm"}, whNow.Add(-span), whNow.Add(2*lease))
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "w2's lease expired: an orphan")
	})
}
