package webhookstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// Filter selects rows for List; the zero Filter is the newest page of all.
type Filter struct {
	Status   string // "" any
	Endpoint string // "" any
	Limit    int    // 0: DefaultLimit; at most MaxLimit
	// Before is the cursor of the previous page's last row (zero: start at
	// the newest).
	Before Cursor
}

// Page sizes of List.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Cursor is a row's place in List's order (newest first): its creation
// time, event id and endpoint.
type Cursor struct {
	CreatedAt time.Time
	EventID   string
	Endpoint  string
}

// Cursor is d's place in List's order, to ask for the page after it.
func (d Delivery) Cursor() Cursor {
	return Cursor{CreatedAt: d.CreatedAt, EventID: d.EventID, Endpoint: d.Endpoint}
}

// IsZero reports whether c is the start of the list.
func (c Cursor) IsZero() bool { return c.CreatedAt.IsZero() && c.EventID == "" && c.Endpoint == "" }

// String is c as an opaque token for a command line (ParseCursor reads it).
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	return c.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + c.EventID + "|" + c.Endpoint
}

// ParseCursor reads a Cursor.String; "" is the start of the list.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	parts := strings.SplitN(s, "|", 3)
	if len(parts) != 3 {
		return Cursor{}, fmt.Errorf("webhook list cursor %q: want time|event|endpoint", s)
	}
	at, err := time.Parse(time.RFC3339Nano, parts[0])
	if err != nil {
		return Cursor{}, fmt.Errorf("webhook list cursor %q: %w", s, err)
	}
	return Cursor{CreatedAt: at, EventID: parts[1], Endpoint: parts[2]}, nil
}

// List returns the rows f selects, newest first, a page at a time.
func (s *Store) List(ctx context.Context, f Filter) ([]Delivery, error) {
	q := s.db().WithContext(ctx).Model(&Delivery{})
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Endpoint != "" {
		q = q.Where("endpoint = ?", f.Endpoint)
	}
	if !f.Before.IsZero() {
		q = q.Where("(created_at, event_id, endpoint) < (?, ?, ?)", models.DBTime(f.Before.CreatedAt), f.Before.EventID, f.Before.Endpoint)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var rows []Delivery
	if err := q.Order("created_at DESC, event_id DESC, endpoint DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	return rows, nil
}

// Show returns an event's rows, one per endpoint; models.ErrNotFound when
// the outbox has none (never written, or delivered and purged).
func (s *Store) Show(ctx context.Context, eventID string) ([]Delivery, error) {
	var rows []Delivery
	if err := s.db().WithContext(ctx).Where("event_id = ?", eventID).Order("endpoint").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("show webhook event %s: %w", eventID, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("webhook event %s: %w", eventID, models.ErrNotFound)
	}
	return rows, nil
}
