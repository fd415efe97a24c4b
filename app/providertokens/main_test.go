package providertokens

import (
	"os"
	"testing"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// postgresURL is the admin URL of the PostgreSQL server the tests share.
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }
