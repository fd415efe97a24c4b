// Package groupstore is the storage of user groups: the user_groups
// table's model and every query on it, both dialects. It is a feature
// package of models (models/<feature>store, on models.Store's
// connection); the table's schema step stays in models/schema (step 10).
// Only admin-given memberships are stored: groups from the config's rules
// (by verified e-mail domain) are computed by app/groups.
package groupstore

import (
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Store is the group storage on a models.Store's database; it implements
// app/groups' Store. Build it with New.
type Store struct {
	store *models.Store
	// sessionSQL is ReadSession's statement, built once: forward-auth
	// runs it on every request.
	sessionSQL string
}

// New returns the group storage on s's database (no state of its own
// beyond its statements' text: any number may share s).
func New(s *models.Store) *Store {
	g := &Store{store: s}
	g.sessionSQL = g.buildSessionSQL()
	return g
}

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }
