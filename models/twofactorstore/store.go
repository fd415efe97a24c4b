// Package twofactorstore is the storage of the second factor: the
// two_factors, recovery_codes and second_steps tables' models and every
// query on them, both dialects. It is a feature package of models (the
// pattern for a feature's tables: models/<feature>store, on models.Store's
// connection), so models stays one room; the tables' schema steps stay in
// models/schema, the one history of the database, and models' PurgeExpired
// deletes expired second_steps rows with the rest.
package twofactorstore

import (
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Store is the two-factor storage on a models.Store's database; it
// implements app/twofactor's Store. Build it with New.
type Store struct {
	store *models.Store
}

// New returns the two-factor storage on s's database (no state of its
// own: any number may share s).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }
