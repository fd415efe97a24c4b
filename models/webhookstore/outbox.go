package webhookstore

import (
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

// TimestampFormat is the events' "timestamp": RFC 3339 in UTC with
// milliseconds, as Standard Webhooks' examples write it.
const TimestampFormat = "2006-01-02T15:04:05.000Z"

// outbox writes events for the endpoints that subscribe to them.
type outbox struct {
	subscribers func(eventType string) []string
}

// NewOutbox returns the events.Outbox that queues each event for the
// endpoints subscribers names for its type (enabled endpoints only). It
// reads subscribers at every call, so it holds no copy of the config.
func NewOutbox(subscribers func(eventType string) []string) events.Outbox {
	return &outbox{subscribers: subscribers}
}

// Wants reports whether an endpoint subscribes to eventType: a change
// nobody listens to writes no row.
func (o *outbox) Wants(eventType string) bool { return len(o.subscribers(eventType)) > 0 }

// Write inserts one pending row per (event, subscribing endpoint) in tx,
// due at once. The body is built here, once per event.
func (o *outbox) Write(tx *gorm.DB, events []events.Event) error {
	var rows []Delivery
	for _, ev := range events {
		endpoints := o.subscribers(ev.Type)
		if len(endpoints) == 0 {
			continue
		}
		at := ev.Time
		if at.IsZero() {
			at = time.Now()
		}
		at = models.DBTime(at)
		body, err := Body(ev.ID, ev.Type, at, ev.Data)
		if err != nil {
			return err
		}
		for _, ep := range endpoints {
			rows = append(rows, Delivery{
				EventID: ev.ID, Endpoint: ep, Type: ev.Type, Body: body,
				Status: StatusPending, NextAt: at, CreatedAt: at,
			})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if err := tx.Create(&rows).Error; err != nil {
		return fmt.Errorf("write webhook events: %w", models.Conflict(err))
	}
	return nil
}

// envelope is an event's body as every receiver gets it.
type envelope struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

// Body is the JSON an event is delivered as:
// {"id","type","timestamp","data"}; data nil becomes {} so receivers can
// always read an object. The test-send builds its body here too.
func Body(id, eventType string, at time.Time, data any) ([]byte, error) {
	if data == nil {
		data = struct{}{}
	}
	b, err := json.Marshal(envelope{ID: id, Type: eventType, Timestamp: at.UTC().Format(TimestampFormat), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode webhook event %s (%s): %w", id, eventType, err)
	}
	return b, nil
}
