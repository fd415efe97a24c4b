package models

import (
	"time"

	"gorm.io/gorm"
)

// The store's feature packages (models/<feature>store, e.g.
// models/twofactorstore) keep a feature's tables and queries out of this
// package, on this Store's one connection pool. These accessors are what
// they need of it; the schema itself stays in models/schema.

// DB is the store's GORM handle, for the store's feature packages: their
// queries run on the same pool, dialect settings and error counting
// (Ready) as every query here.
func (s *Store) DB() *gorm.DB { return s.db }

// DBTime is dbTime for the store's feature packages: every time they write
// or compare must have the precision and zone this package's do.
func DBTime(t time.Time) time.Time { return dbTime(t) }

// Conflict is conflict for the store's feature packages: a unique
// constraint's failure becomes ErrConflict, as it does here.
func Conflict(err error) error { return conflict(err) }
