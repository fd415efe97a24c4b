package webhookstore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// claimSQL hands due pending rows to one worker: in one statement it picks
// up to limit rows that are due and not held by an unexpired lease, and
// leases them. On PostgreSQL the pick locks its rows FOR UPDATE SKIP
// LOCKED, so workers claiming at once split the due rows between them
// instead of queueing on each other (a row another claim has just
// committed is re-checked against the lease by PostgreSQL and skipped);
// SQLite runs one writer at a time, so the statement alone is enough. The
// lease is the hand-off on both: until it expires no other claim takes the
// row, and a worker that died leaves it to the next claim after that.
const claimSQL = `UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ?
	WHERE (event_id, endpoint) IN (SELECT event_id, endpoint FROM webhook_deliveries
		WHERE status = 'pending' AND next_at <= ? AND (lease_until IS NULL OR lease_until < ?) AND endpoint IN ?
		ORDER BY next_at LIMIT ?%s)
	RETURNING event_id, endpoint, type, body, status, attempts, next_at, lease_owner, lease_until,
		last_status, last_error, created_at, delivered_at`

// Claim leases up to limit due pending rows of the named endpoints to
// owner until now+lease and returns them; an empty result when nothing is
// due. Only endpoints the worker knows: during a rolling change of the
// config, an instance that does not have an endpoint yet (or any more)
// leaves its rows to those that do (FailOrphans ends rows nobody claims).
// owner must be unique per worker: the attempt's record (Delivered,
// Retry, Fail) holds only while the lease is still owner's.
func (s *Store) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, endpoints []string) ([]Delivery, error) {
	if len(endpoints) == 0 {
		return nil, nil
	}
	if owner == "" || limit <= 0 {
		return nil, errors.New("claim webhook deliveries: an owner and a positive limit are required")
	}
	skip := ""
	if s.postgres() {
		skip = " FOR UPDATE SKIP LOCKED"
	}
	now = models.DBTime(now)
	var rows []Delivery
	err := s.db().WithContext(ctx).Raw(fmt.Sprintf(claimSQL, skip), owner, models.DBTime(now.Add(lease)), now, now, endpoints, limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	return rows, nil
}

// Release hands back a claimed row without an attempt (the worker took
// more of one endpoint's rows than it sends at once): the lease ends, the
// row stays due, and any worker may claim it. Only while the lease is
// still d.LeaseOwner's; otherwise nothing changes and ErrLeaseLost.
func (s *Store) Release(ctx context.Context, d Delivery) error {
	r := s.db().WithContext(ctx).Model(&Delivery{}).
		Where("event_id = ? AND endpoint = ? AND lease_owner = ? AND lease_owner <> '' AND status = ?", d.EventID, d.Endpoint, d.LeaseOwner, StatusPending).
		UpdateColumns(map[string]any{"lease_owner": "", "lease_until": nil})
	if r.Error != nil {
		return fmt.Errorf("webhook delivery %s to %s: release: %w", d.EventID, d.Endpoint, r.Error)
	}
	if r.RowsAffected == 0 {
		return fmt.Errorf("webhook delivery %s to %s: release: %w", d.EventID, d.Endpoint, ErrLeaseLost)
	}
	return nil
}

// maxErrorLen bounds a stored error text: the last error says why, it is
// not a log.
const maxErrorLen = 1000

// Delivered records a 2xx answer: the row is done. Only while the lease is
// still d.LeaseOwner's; otherwise nothing changes and ErrLeaseLost.
func (s *Store) Delivered(ctx context.Context, d Delivery, status int, at time.Time) error {
	at = models.DBTime(at)
	return s.record(ctx, d, "delivered", map[string]any{
		"status": StatusDelivered, "delivered_at": at, "last_status": status, "last_error": "",
	})
}

// Retry records a failed attempt with another due at next.
func (s *Store) Retry(ctx context.Context, d Delivery, status int, errText string, next time.Time) error {
	return s.record(ctx, d, "retry", map[string]any{
		"next_at": models.DBTime(next), "last_status": status, "last_error": truncate(errText),
	})
}

// Fail records the last attempt (schedule spent) or an endpoint no longer
// configured: the row waits for an operator's retry.
func (s *Store) Fail(ctx context.Context, d Delivery, status int, errText string, at time.Time) error {
	return s.record(ctx, d, "fail", map[string]any{
		"status": StatusFailed, "next_at": models.DBTime(at), "last_status": status, "last_error": truncate(errText),
	})
}

// record applies an attempt's outcome to a pending row still leased to
// d.LeaseOwner, counting the attempt and releasing the lease: a worker
// whose lease expired and was claimed by another cannot overwrite the
// other's record.
func (s *Store) record(ctx context.Context, d Delivery, what string, set map[string]any) error {
	if d.LeaseOwner == "" {
		return fmt.Errorf("webhook delivery %s to %s: %s: %w", d.EventID, d.Endpoint, what, ErrLeaseLost)
	}
	set["attempts"] = gorm.Expr("attempts + 1")
	set["lease_owner"] = ""
	set["lease_until"] = nil
	r := s.db().WithContext(ctx).Model(&Delivery{}).
		Where("event_id = ? AND endpoint = ? AND lease_owner = ? AND status = ?", d.EventID, d.Endpoint, d.LeaseOwner, StatusPending).
		UpdateColumns(set)
	if r.Error != nil {
		return fmt.Errorf("webhook delivery %s to %s: %s: %w", d.EventID, d.Endpoint, what, r.Error)
	}
	if r.RowsAffected == 0 {
		return fmt.Errorf("webhook delivery %s to %s: %s: %w", d.EventID, d.Endpoint, what, ErrLeaseLost)
	}
	return nil
}

// truncate cuts s to maxErrorLen bytes on a rune boundary.
func truncate(s string) string {
	if len(s) <= maxErrorLen {
		return s
	}
	s = s[:maxErrorLen]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
