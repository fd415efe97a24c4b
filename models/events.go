package models

import (
	"time"

	"gorm.io/gorm"
)

// Event is one account change reported to webhooks: written to the outbox
// in the transaction of the change, so a change that rolls back reports
// nothing and one that commits is always reported.
type Event struct {
	ID, Type string
	Time     time.Time
	Data     any
}

// Outbox receives the events of a change inside its transaction; the
// webhook store (models/webhookstore) implements it.
type Outbox interface {
	// Wants reports whether some enabled endpoint subscribes to the type,
	// so a change nobody listens to writes nothing.
	Wants(eventType string) bool
	// Write inserts events in tx; each has ID, Type, Time and Data set.
	Write(tx *gorm.DB, events []Event) error
}
