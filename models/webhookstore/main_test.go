package webhookstore

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

func eachDialect(t *testing.T, f func(t *testing.T, c models.Config)) {
	t.Helper()
	storetest.EachDialect(t, postgresURL, f)
}

func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) { f(t, New(s)) })
}

func connect(t *testing.T, c models.Config) *Store { t.Helper(); return New(storetest.Connect(t, c)) }

// TestMigrationsMatchModels: models/schema's step 12 creates every column
// and index Delivery declares, on both dialects.
func TestMigrationsMatchModels(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		storetest.RequireMigrated(t, s.store, &Delivery{})
	})
}
