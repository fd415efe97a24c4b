// Package multi_test runs several real latchkey processes on one PostgreSQL
// database, as a deployment with more than one instance does, and checks
// what a user would notice: a session, an e-mail link or an OAuth sign-in
// started on one instance carries on at another; racing requests and
// racing start-ups do each thing once; a database restart or a bad
// DATABASE_URL gets a clear answer instead of a crash.
//
// TestMain builds the latchkey binary once and shares one PostgreSQL server
// (pgtest) among the tests; every test gets a fresh database. The SMTP
// catcher and the OpenID Connect server run inside the test process.
package multi_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

var (
	// binary is the latchkey binary under test, built by TestMain.
	binary string
	// adminURL is the superuser URL of the PostgreSQL server the tests share.
	adminURL string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "latchkey-multi-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "multi:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "latchkey")
	// Built without -race: the processes are the system under test, the
	// race detector watches the test process; and it keeps the build quick
	// on small machines.
	build := exec.Command("go", "build", "-o", binary, "github.com/latchkey-auth/latchkey")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "multi: go build:", err)
		return 1
	}
	return pgtest.Main(m, &adminURL)
}
