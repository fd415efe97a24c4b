package webhookstore

import "time"

// Delivery is one event to one endpoint: the outbox's row. Body is the
// event's JSON, built once when the event was written, identical for every
// endpoint and every attempt (receivers de-duplicate by EventID).
type Delivery struct {
	EventID  string `gorm:"primaryKey;size:40"`
	Endpoint string `gorm:"primaryKey;size:64"`
	Type     string `gorm:"not null"`
	Body     []byte `gorm:"not null;type:text"`
	Status   string `gorm:"not null;index:idx_webhook_deliveries_due,priority:1"`
	// Attempts counts the attempts made; NextAt is when the next is due.
	Attempts int       `gorm:"not null"`
	NextAt   time.Time `gorm:"not null;index:idx_webhook_deliveries_due,priority:2"`
	// LeaseOwner ('' for none) is the worker holding the row until
	// LeaseUntil; a worker killed mid-delivery leaves a lease that
	// expires, and any worker may claim the row again.
	LeaseOwner string `gorm:"not null"`
	LeaseUntil *time.Time
	// LastStatus is the last attempt's HTTP status (0: none, no answer);
	// LastError why it failed, without body or secret.
	LastStatus  int    `gorm:"not null"`
	LastError   string `gorm:"not null"`
	CreatedAt   time.Time
	DeliveredAt *time.Time
	// QueuedAt is when an operator's retry queued the row again (nil: not
	// since CreatedAt); the backlog's age counts from it.
	QueuedAt *time.Time
}

// TableName is the outbox's table.
func (Delivery) TableName() string { return "webhook_deliveries" }

// Attempt is the number of the attempt a claimed row is about to make.
func (d Delivery) Attempt() int { return d.Attempts + 1 }
