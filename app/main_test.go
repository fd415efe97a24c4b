package app_test

import (
	"os"
	"testing"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// postgres is the PostgreSQL server of the tests that run on PostgreSQL
// (envOpts.postgres, several instances on one database); it starts only
// when one of them asks.
var postgres pgtest.Shared

// migrated gives the tests' PostgreSQL databases the schema already
// applied: migrated once per server, copied per test (app.New then finds
// nothing to apply).
var migrated = pgtest.Template{Prepare: func(dbURL string) error {
	s, err := models.Connect(models.Config{Dialect: models.DialectPostgres, DSN: dbURL})
	if err != nil {
		return err
	}
	return s.Close()
}}

func TestMain(m *testing.M) {
	code := m.Run()
	migrated.Drop()
	postgres.Stop()
	os.Exit(code)
}
