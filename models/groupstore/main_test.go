package groupstore

import (
	"os"
	"testing"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

// postgresURL is the admin URL of the PostgreSQL server the tests share.
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }

// The tests run on both dialects through models/storetest; these adapt its
// helpers to this package's Store, reaching models.Store as s.store.

func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) { f(t, New(s)) })
}

func newUser(t *testing.T, s *Store, email string) *models.User {
	t.Helper()
	return storetest.NewUser(t, s.store, email)
}

func count(t *testing.T, s *Store, table string) int64 {
	t.Helper()
	return storetest.Count(t, s.store, table)
}

// TestMigrationsMatchModels: models/schema's steps create every table,
// column and index this package's model declares, on both dialects.
func TestMigrationsMatchModels(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		storetest.RequireMigrated(t, s.store, &Membership{})
	})
}
