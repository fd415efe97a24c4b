// Package openidstore is the storage of the OpenID Provider (issue #30):
// the oidc_clients, oidc_auth_requests, oidc_tokens, oidc_consents and
// oidc_signing_keys tables' models and every query on them, both dialects.
// It is a feature package of models (as models/twofactorstore), on
// models.Store's connection; the tables' schema step stays in
// models/schema. It implements app/openid's Store without importing it
// (app/openid imports this package): a row not found is models.ErrNotFound.
//
// Several instances serve one database: every write that decides something
// (a "claim": completing a request, saving or exchanging its code, rotating
// a refresh token) is one conditional UPDATE whose RowsAffected says
// whether it won, and writes of several rows are one transaction. The store
// holds no business rules beyond its statements; lists are space-separated
// strings, as the caller gives them.
package openidstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Store is the OpenID Provider's storage on a models.Store's database; it
// implements app/openid's Store. Build it with New.
type Store struct {
	store *models.Store
}

// New returns the OpenID Provider's storage on s's database (no state of
// its own: any number may share s).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle every query starts from.
func (s *Store) db() *gorm.DB { return s.store.DB() }

// UserByID is models.Store's UserByID (models.ErrNotFound: gone).
func (s *Store) UserByID(ctx context.Context, id string) (*models.User, error) {
	return s.store.UserByID(ctx, id)
}

// dbTimePtr is models.DBTime of *t, or nil.
func dbTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := models.DBTime(*t)
	return &v
}

// dbTimeOrZero is models.DBTime of t, leaving a zero time zero (GORM then
// fills CreatedAt and UpdatedAt with its clock, at the same precision).
func dbTimeOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return models.DBTime(t)
}
