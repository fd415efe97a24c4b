// Package webhookstore is the webhook outbox: the webhook_deliveries
// table's model and every query on it, both dialects. A change writes its
// events here in its own transaction (Outbox); delivery workers on any
// instance claim due rows under a lease (Store.Claim) and record each
// attempt. The table's schema step is in models/schema (step 12).
package webhookstore

import (
	"errors"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Delivery statuses: pending until a 2xx answer (delivered) or until the
// retry schedule is spent or the endpoint is gone (failed).
const (
	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
)

// ErrLeaseLost is returned when a worker records an attempt on a row it no
// longer holds: its lease expired and another worker claimed the row, or
// an operator reset it. The record is dropped; the row's holder decides.
var ErrLeaseLost = errors.New("webhook delivery: lease lost")

// Store is the outbox's queries on a models.Store's database; it
// implements app/webhooks' Store. Build it with New.
type Store struct {
	store *models.Store
}

// New returns the outbox queries on s's database (no state of its own:
// any number may share s).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }

// postgres reports whether the database is PostgreSQL, whose claim skips
// rows another worker is claiming instead of waiting for them.
func (s *Store) postgres() bool { return s.store.Dialect() == models.DialectPostgres }
