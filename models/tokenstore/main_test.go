package tokenstore

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

func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) { f(t, New(s)) })
}

// TestMigrationsMatchModels: models/schema's steps create every column
// this package's model declares, on both dialects.
func TestMigrationsMatchModels(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) { storetest.RequireMigrated(t, s.store, &Account{}) })
}
