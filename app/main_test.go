package app_test

import (
	"os"
	"testing"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// postgres is the PostgreSQL server of the tests that run on PostgreSQL
// (envOpts.postgres, several instances on one database); it starts only
// when one of them asks.
var postgres pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	postgres.Stop()
	os.Exit(code)
}
