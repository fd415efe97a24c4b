package multi_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A SQLite instance probed by GET /health/ready (as every orchestrator
// does, over and over) keeps its hold on the database: an admin command
// run beside it as a second process changes what the instance sees at
// once, the write-ahead log the instance writes to stays the one at
// latchkey.db-wal, and what the instance wrote survives a kill -9. A
// probe that opened and closed the database file dropped every POSIX lock
// the process held on it, so the admin command's exit checkpointed and
// unlinked the live -wal and -shm: the revoked session stayed, the created
// user was unknown to the instance, and its later writes went to a deleted
// file and were lost at the next start.
func TestSQLiteProbesKeepTheWriteAheadLog(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the instance's open files in /proc")
	}
	c := newCluster(t, "postgres://latchkey@127.0.0.1/unused") // the instance runs on SQLite
	c.withCredentials()
	file := c.sqliteURL("latchkey.db")
	a := c.startWith("S", file)
	ann := c.browser()
	c.signInByEmail(ann, a, "ann@example.com")
	require.Equal(t, "ann@example.com", ann.email(a))

	c.probeReady(a)
	line := c.admin(file, "sessions", "revoke", "--user", "ann@example.com").ok(t, "revoked the sessions of user ann@example.com (")
	require.Contains(t, line, "deleted 1 database session;", "the command sees the instance's writes")
	endsWithin(t, ann, a, time.Now(), cacheTTL+cacheSlack)
	requireOpenFiles(t, a, file+"-wal", file+"-shm")

	c.probeReady(a)
	const pw = "a long passphrase for bob"
	c.adminInput(pw+"\n", file, "users", "create", "--password-stdin", "bob@example.com").ok(t, "created user bob@example.com (")
	bob := c.browser()
	signInWithPassword(t, bob, a, c.origin(), "bob@example.com", pw)
	require.Equal(t, "bob@example.com", bob.email(a), "the instance knows the user the command created")
	requireOpenFiles(t, a, file+"-wal", file+"-shm")

	// A change made through the instance after all this is on disk.
	c.probeReady(a)
	c.admin(file, "migrate", "status").ok(t, "sqlite schema: version ")
	cat := c.browser()
	c.signInByEmail(cat, a, "cat@example.com")
	require.Equal(t, "cat@example.com", cat.email(a))
	requireOpenFiles(t, a, file+"-wal", file+"-shm")

	require.NoError(t, a.cmd.Process.Kill())
	<-a.done
	again := c.startWith("S2", file)
	require.Equal(t, "cat@example.com", cat.email(again), "a sign-in made before kill -9 survives it")
	require.Equal(t, "bob@example.com", bob.email(again))
	require.Empty(t, ann.email(again), "the revoked session stays revoked")
}

// withCredentials adds the password (credentials) provider to the config.
func (c *cluster) withCredentials() {
	c.t.Helper()
	raw, err := os.ReadFile(c.config)
	require.NoError(c.t, err)
	with := strings.Replace(string(raw), "callbacks:\n", "  - type: credentials\ncallbacks:\n", 1)
	require.NoError(c.t, os.WriteFile(c.config, []byte(with), 0o600))
}

// probeReady calls GET /health/ready on in three times, each a check of
// its own (one result answers the probes of a second), all answered 200.
func (c *cluster) probeReady(in *instance) {
	c.t.Helper()
	br := c.browser()
	for i := range 3 {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		r := br.root(in, http.MethodGet, "/health/ready")
		require.Equal(c.t, http.StatusOK, r.StatusCode, r.body)
	}
}

// signInWithPassword signs br in on in with the credentials provider.
func signInWithPassword(t *testing.T, br *browser, in *instance, origin, addr, pw string) {
	t.Helper()
	r := br.post(in.url("/callback/credentials"), url.Values{"csrfToken": {br.csrf(in)}, "email": {addr},
		"password": {pw}, "json": {"true"}, "callbackUrl": {origin + "/home"}})
	require.Equal(t, http.StatusOK, r.StatusCode, r.body)
}

// requireOpenFiles asserts that the process in has each of paths open,
// and that none of the files it has open there was deleted (Linux shows a
// removed file as "PATH (deleted)" in /proc/PID/fd).
func requireOpenFiles(t *testing.T, in *instance, paths ...string) {
	t.Helper()
	fds := filepath.Join("/proc", strconv.Itoa(in.cmd.Process.Pid), "fd")
	entries, err := os.ReadDir(fds)
	require.NoError(t, err)
	var open []string
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil {
			open = append(open, target)
		}
	}
	for _, p := range paths {
		require.Contains(t, open, p, "instance %s has %s open", in.name, p)
		require.NotContains(t, open, p+" (deleted)", "instance %s writes to a deleted %s", in.name, p)
	}
}
