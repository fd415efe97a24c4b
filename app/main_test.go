package app_test

import (
	"os"
	"testing"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// postgresURL is the admin URL of the PostgreSQL server these tests share
// (envOpts.postgres gives a test app a fresh database on it).
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }
