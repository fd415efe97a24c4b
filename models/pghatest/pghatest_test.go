package pghatest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The helper's own check, half a minute of fail-overs: test/multi's
// fail-over test exercises all of it under load, so it runs only when
// LATCHKEY_PGHA_SELFTEST is set (while working on this package).
func TestClusterFailsOverAndHeals(t *testing.T) {
	if os.Getenv("LATCHKEY_PGHA_SELFTEST") == "" {
		t.Skip("LATCHKEY_PGHA_SELFTEST unset: test/multi's TestFailover covers the helper")
	}
	start := time.Now()
	c := Start(t, Options{})
	t.Logf("healthy after %s", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	db, err := sql.Open("pgx", c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE marks (n int)")
	mustExec(t, db, "INSERT INTO marks VALUES (1)")

	first, err := c.Primary(ctx)
	if err != nil || first != c.Nodes()[0] {
		t.Fatalf("primary %v, %v; want node1", first, err)
	}
	// The password is checked, on both nodes (the standby's pg_hba.conf is
	// the primary's copy).
	for _, n := range c.Nodes() {
		wrong, _ := sql.Open("pgx", fmt.Sprintf("postgres://%s:wrong@127.0.0.1:%d/%s", User, n.Port, Database))
		if err := wrong.PingContext(ctx); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
			t.Errorf("%s: a wrong password: %v", n, err)
		}
		_ = wrong.Close()
	}
	sync, err := c.show(ctx, first, "synchronous_standby_names")
	t.Logf("synchronous_standby_names on %s: %q (%v)", first, sync, err)

	// Only the postmaster killed: the keeper starts it again in place,
	// and the monitor fails over all the same (KillPostgres).
	if err := c.KillPostgres(first); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	for {
		if ok, _ := c.writable(ctx, first); ok {
			break
		}
		if time.Since(restarted) > time.Minute {
			t.Fatal("postgres not back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("postmaster killed: %s writable again after %s", first, time.Since(restarted).Round(time.Millisecond))
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	first, _ = c.Primary(ctx)
	events, _ := c.Events(ctx, 25)
	t.Logf("healthy again after %s, primary %s; events:\n%s", time.Since(restarted).Round(time.Millisecond), first, strings.Join(events, "\n"))

	killed := time.Now()
	if err := c.Kill(first); err != nil {
		t.Fatal(err)
	}
	second, err := c.WaitPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kill -9: %s writable after %s", second, time.Since(killed).Round(time.Millisecond))
	if second == first {
		t.Fatalf("still %s", first)
	}
	db.SetMaxOpenConns(0)
	mustExec(t, db, "INSERT INTO marks VALUES (2)")

	if err := c.Rejoin(first); err != nil {
		t.Fatal(err)
	}
	rejoin := time.Now()
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("rejoined after %s", time.Since(rejoin).Round(time.Millisecond))

	switched := time.Now()
	if err := c.Switchover(ctx); err != nil {
		t.Fatal(err)
	}
	back, err := c.WaitPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("switchover: %s writable after %s", back, time.Since(switched).Round(time.Millisecond))
	if back != first {
		t.Errorf("primary %s after the switchover; want %s", back, first)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM marks").Scan(&n); err != nil || n != 2 {
		t.Fatalf("marks: %d, %v", n, err)
	}
}

func mustExec(t *testing.T, db *sql.DB, stmt string) {
	t.Helper()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
