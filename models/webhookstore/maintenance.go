package webhookstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// requeue is what an operator's retry sets: a fresh schedule, due now.
func requeue(now time.Time) map[string]any {
	return map[string]any{
		"status": StatusPending, "attempts": 0, "next_at": models.DBTime(now), "queued_at": models.DBTime(now),
		"lease_owner": "", "lease_until": nil,
	}
}

// RetryEvent puts an event's failed rows back to pending with a fresh
// schedule, due at now; the number of rows requeued (0: none failed).
func (s *Store) RetryEvent(ctx context.Context, eventID string, now time.Time) (int64, error) {
	r := s.db().WithContext(ctx).Model(&Delivery{}).
		Where("event_id = ? AND status = ?", eventID, StatusFailed).UpdateColumns(requeue(now))
	if r.Error != nil {
		return 0, fmt.Errorf("retry webhook event %s: %w", eventID, r.Error)
	}
	return r.RowsAffected, nil
}

// RetryFailed puts every failed row back to pending, due at now.
func (s *Store) RetryFailed(ctx context.Context, now time.Time) (int64, error) {
	r := s.db().WithContext(ctx).Model(&Delivery{}).
		Where("status = ?", StatusFailed).UpdateColumns(requeue(now))
	if r.Error != nil {
		return 0, fmt.Errorf("retry failed webhook deliveries: %w", r.Error)
	}
	return r.RowsAffected, nil
}

// Stats is the outbox's backlog, for the metrics and the admin command.
type Stats struct {
	Pending, Failed int64
	// OldestPending is when the longest-waiting pending row was queued:
	// written, or queued again by an operator's retry (zero when none is
	// pending).
	OldestPending time.Time
}

// Stats counts the pending and failed rows and finds the oldest pending
// one. OldestPending is never later than now (another instance's clock may
// run ahead), so its age is never negative.
func (s *Store) Stats(ctx context.Context, now time.Time) (Stats, error) {
	var counts []struct {
		Status string
		N      int64
	}
	db := s.db().WithContext(ctx)
	err := db.Model(&Delivery{}).Select("status, COUNT(*) AS n").
		Where("status IN ?", []string{StatusPending, StatusFailed}).Group("status").Scan(&counts).Error
	if err != nil {
		return Stats{}, fmt.Errorf("webhook stats: %w", err)
	}
	var st Stats
	for _, c := range counts {
		if c.Status == StatusPending {
			st.Pending = c.N
		} else {
			st.Failed = c.N
		}
	}
	if st.Pending == 0 {
		return st, nil
	}
	var oldest Delivery
	err = db.Select("created_at, queued_at").Where("status = ?", StatusPending).
		Order("COALESCE(queued_at, created_at)").Take(&oldest).Error
	if errors.Is(err, gorm.ErrRecordNotFound) { // delivered since the count
		return st, nil
	}
	if err != nil {
		return Stats{}, fmt.Errorf("webhook stats: oldest pending: %w", err)
	}
	st.OldestPending = oldest.CreatedAt
	if oldest.QueuedAt != nil {
		st.OldestPending = *oldest.QueuedAt
	}
	if now = models.DBTime(now); st.OldestPending.After(now) {
		st.OldestPending = now
	}
	return st, nil
}

// DeliveredRetention is how long delivered rows are kept (for `webhooks
// show`) before PurgeDelivered removes them.
const DeliveredRetention = 7 * 24 * time.Hour

// FailOrphans fails the pending rows of endpoints not in known that have
// been due since before before, unclaimed (the caller passes now less the
// retry schedule's whole span: they would have failed by now had they
// been tried). Such rows belong to an endpoint removed from or disabled in
// the config; no worker claims them (Claim), and this ends them as
// "endpoint not configured" so the backlog does not grow for ever. An
// operator's `webhooks retry` brings them back once the endpoint is
// configured again.
//
// The age is next_at's, not created_at's: a retry re-queues a row due now
// and keeps its creation time, so measured from created_at a re-queued
// delivery of an old event was failed again at once by any instance whose
// config lacks the endpoint (mid-rollout), before an instance that has it
// could send it. next_at is also when a row on its retry schedule is next
// due, never a span in the past while a worker that knows the endpoint
// keeps trying it. A row leased to a worker is in flight on an instance that
// has its endpoint: it is left to that attempt, whose outcome would
// otherwise be dropped (lease lost) and a delivered event shown failed,
// sent again by an operator's retry; an expired lease no longer counts.
func (s *Store) FailOrphans(ctx context.Context, known []string, before, now time.Time) (int64, error) {
	q := s.db().WithContext(ctx).Model(&Delivery{}).Where("status = ? AND next_at < ? AND (lease_until IS NULL OR lease_until < ?)",
		StatusPending, models.DBTime(before), models.DBTime(now))
	if len(known) > 0 {
		q = q.Where("endpoint NOT IN ?", known)
	}
	r := q.Updates(map[string]any{"status": StatusFailed, "last_error": ReasonOrphan, "lease_owner": "", "lease_until": nil, "next_at": models.DBTime(now)})
	if r.Error != nil {
		return 0, fmt.Errorf("fail orphaned webhooks: %w", r.Error)
	}
	return r.RowsAffected, nil
}

// ReasonOrphan is the last error of a row FailOrphans ended.
const ReasonOrphan = "endpoint not configured"

// PurgeFailed deletes rows that failed before before (a failed row's
// next_at is when it failed): the events carry personal data (e-mail,
// name), also of users deleted since, which an outbox must not keep for
// ever. Pending and delivered rows stay. The number deleted.
func (s *Store) PurgeFailed(ctx context.Context, before time.Time) (int64, error) {
	r := s.db().WithContext(ctx).Where("status = ? AND next_at < ?", StatusFailed, models.DBTime(before)).Delete(&Delivery{})
	if r.Error != nil {
		return 0, fmt.Errorf("purge failed webhooks: %w", r.Error)
	}
	return r.RowsAffected, nil
}

// FailedRetention is how long a failed row waits for an operator's retry
// before PurgeFailed removes it: the failures' alert fires within the
// hour, and a month is time enough to fix a receiver.
const FailedRetention = 30 * 24 * time.Hour

// PurgeDelivered deletes rows delivered before before; failed and pending
// rows stay. The number deleted.
func (s *Store) PurgeDelivered(ctx context.Context, before time.Time) (int64, error) {
	r := s.db().WithContext(ctx).Where("status = ? AND delivered_at < ?", StatusDelivered, models.DBTime(before)).Delete(&Delivery{})
	if r.Error != nil {
		return 0, fmt.Errorf("purge delivered webhooks: %w", r.Error)
	}
	return r.RowsAffected, nil
}
