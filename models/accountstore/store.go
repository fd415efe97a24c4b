// Package accountstore is the storage of the account page (issue #29): a
// user's database sessions as the page lists and ends them, the jwt
// strategy's per-sign-in records (sign_ins), unlinking an identity and the
// e-mail change links. It is a feature package of models (the pattern:
// models/<feature>store, on models.Store's connection), so models stays
// one room; the schema is models/schema's step 9, and models' PurgeExpired
// deletes expired sign_ins with the rest.
//
// Every write that decides something ("this user's session", "one link,
// one change") is one conditional statement or one transaction, so
// requests in parallel on any number of instances get one answer from the
// database, not from a read followed by a write.
package accountstore

import (
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Store is the account page's storage on a models.Store's database. Build
// it with New.
type Store struct {
	store *models.Store
}

// New returns the account page's storage on s's database (no state of its
// own: any number may share s).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }
