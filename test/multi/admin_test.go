package multi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// The admin commands (`latchkey users|sessions|accounts ...`) run as
// separate processes of the binary, with the instances' environment and
// config, against the database of live instances; each test checks what a
// user then sees in GET /session.

// poll is session.revocation_poll in these clusters: a revoked jwt session
// must end on every instance within it.
const poll = 200 * time.Millisecond

// startClusterSession is startCluster (two instances on a fresh
// PostgreSQL database) with the session strategy and poll set.
func startClusterSession(t *testing.T, strategy string) *cluster {
	t.Helper()
	return startCluster(t, clusterOpts{extraConfig: "session:\n  strategy: " + strategy + "\n  revocation_poll: " + poll.String() + "\n"})
}

// adminRun is one finished admin command.
type adminRun struct {
	code           int
	stdout, stderr string
}

// admin runs `latchkey --config FILE ARGS...` with the instances'
// environment on the database at dbURL, standard input not a terminal,
// and checks that it printed no secret.
func (c *cluster) admin(dbURL string, args ...string) adminRun {
	c.t.Helper()
	return c.adminInput("y\n", dbURL, args...)
}

// adminInput is admin with stdin as the command's standard input.
func (c *cluster) adminInput(stdin, dbURL string, args ...string) adminRun {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"--config", c.config}, args...)...)
	cmd.Env = c.env(0, dbURL)
	cmd.Dir = c.dir
	cmd.Stdin = strings.NewReader(stdin) // not a terminal: only --yes confirms
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var exit *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &exit) {
		c.t.Fatalf("latchkey %v: %v", args, err)
	}
	r := adminRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}
	for _, bad := range []string{dbPassword, authSecret, "panic", "goroutine "} {
		require.NotContains(c.t, r.stdout+r.stderr, bad, "latchkey %v", args)
	}
	return r
}

// ok asserts that the command succeeded with one line on stdout starting
// with prefix and nothing on stderr, and returns the line.
func (r adminRun) ok(t *testing.T, prefix string) string {
	t.Helper()
	require.Equal(t, 0, r.code, "stdout %q, stderr %q", r.stdout, r.stderr)
	require.Empty(t, r.stderr)
	require.Equal(t, 1, strings.Count(r.stdout, "\n"), r.stdout)
	require.True(t, strings.HasPrefix(r.stdout, prefix), "%q does not start with %q", r.stdout, prefix)
	return strings.TrimSpace(r.stdout)
}

// failed asserts a non-zero exit with exactly one line on stderr that
// contains what, and nothing on stdout.
func (r adminRun) failed(t *testing.T, code int, what string) {
	t.Helper()
	require.Equal(t, code, r.code, "stdout %q, stderr %q", r.stdout, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "latchkey: "), r.stderr)
	require.Contains(t, r.stderr, what)
}

// annBobAndThief signs ann@example.com in on the first instance and
// bob@example.com on the second, copies Ann's cookie to a third browser,
// and checks that every instance sees all three.
func (c *cluster) annBobAndThief() (ann, bob, stolen *browser) {
	c.t.Helper()
	ann, bob = c.browser(), c.browser()
	c.signInByEmail(ann, c.nodes[0], "ann@example.com")
	c.signInByEmail(bob, c.nodes[1], "bob@example.com")
	stolen = c.sessionCookieCopy(ann)
	for _, in := range c.nodes {
		require.Equal(c.t, "ann@example.com", ann.email(in))
		require.Equal(c.t, "ann@example.com", stolen.email(in))
		require.Equal(c.t, "bob@example.com", bob.email(in))
	}
	return ann, bob, stolen
}

// signedOutEverywhere waits until GET /session on every instance answers
// {} for br, within the poll (and a margin for a slow machine), and returns
// how long that took.
func (c *cluster) signedOutEverywhere(br *browser) time.Duration {
	c.t.Helper()
	start := time.Now()
	for _, in := range c.nodes {
		endsWithin(c.t, br, in, start, poll+3*time.Second)
	}
	return time.Since(start)
}

// sessionCookieCopy is a new browser holding a copy of br's session
// cookie(s): what a thief has, which no sign-out of br's own clears.
func (c *cluster) sessionCookieCopy(br *browser) *browser {
	c.t.Helper()
	thief := c.browser()
	u := mustURL(c.t, c.nodes[0].url("/"))
	thief.client.Jar.SetCookies(u, br.client.Jar.Cookies(u))
	return thief
}

// `sessions revoke --user` ends that user's sessions, and a copy of its
// cookie, on both instances: database sessions within session.cache_ttl,
// jwt ones within the poll; another user's session stays, and the user can sign in again.
// `sessions revoke --all` then ends everyone's. The lists show what is
// there on the way.
func TestAdminRevokeSessions(t *testing.T) {
	for _, strategy := range []string{"database", "jwt"} {
		t.Run(strategy, func(t *testing.T) {
			c := startClusterSession(t, strategy)
			b := c.nodes[1]
			ann, bob, stolen := c.annBobAndThief()

			var users []struct {
				Email     string
				Providers []string
				Sessions  int
			}
			r := c.admin(c.dbURL, "users", "list", "--json")
			require.Equal(t, 0, r.code, r.stderr)
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &users), r.stdout)
			require.Len(t, users, 2)
			require.Equal(t, "ann@example.com", users[0].Email)
			require.Equal(t, []string{}, users[0].Providers)
			var sessions []map[string]any
			r = c.admin(c.dbURL, "sessions", "list", "--user", "ann@example.com", "--json")
			require.Equal(t, 0, r.code, r.stderr)
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &sessions), r.stdout)
			if strategy == "database" {
				require.Equal(t, 1, users[0].Sessions)
				require.Len(t, sessions, 1)
				require.Equal(t, "ann@example.com", sessions[0]["email"])
			} else {
				require.Empty(t, sessions, "jwt sessions have no rows")
				require.Contains(t, r.stderr, "session.strategy is jwt")
			}
			require.NotContains(t, r.stdout, ann.cookie(sessionCookie)[:20], "no session token in the output")

			line := c.admin(c.dbURL, "sessions", "revoke", "--user", "ann@example.com").ok(t, "revoked the sessions of user ann@example.com (")
			revoked := time.Now()
			if strategy == "database" {
				require.Contains(t, line, "deleted 1 database session;")
				// The rows are gone; each instance may have read the
				// session within session.cache_ttl before.
				for _, in := range c.nodes {
					endsWithin(t, stolen, in, revoked, cacheTTL+cacheSlack)
				}
			} else {
				require.Contains(t, line, "deleted 0 database sessions;")
				took := c.signedOutEverywhere(stolen)
				t.Logf("the revoked jwt session ended on both instances %s after the command", took)
			}
			require.Contains(t, line, "end within 200ms on every instance")
			c.signedOutEverywhere(ann)
			require.Empty(t, ann.cookie(sessionCookie), "the cookie is cleared")
			for _, in := range c.nodes {
				require.Equal(t, "bob@example.com", bob.email(in), "bob's session stays on %s", in.name)
			}

			time.Sleep(time.Second) // a sign-in within the revocation's second is revoked too
			again := c.browser()
			c.signInAgainByEmail(again, b, "ann@example.com")
			for _, in := range c.nodes {
				require.Equal(t, "ann@example.com", again.email(in), "signed in again after the revocation")
			}

			line = c.admin(c.dbURL, "sessions", "revoke", "--all", "--yes").ok(t, "revoked every session: deleted ")
			if strategy == "database" {
				require.Contains(t, line, "deleted 2 database sessions;")
			}
			c.signedOutEverywhere(again)
			c.signedOutEverywhere(bob)
			require.Equal(t, 0, c.count("sessions"))
		})
	}
}

// `users delete` removes the user with its sessions (jwt ones within the
// poll), accounts and pending links in one go, after confirmation; without
// a terminal it needs --yes and changes nothing before.
func TestAdminDeleteUser(t *testing.T) {
	for _, strategy := range []string{"database", "jwt"} {
		t.Run(strategy, func(t *testing.T) {
			c := startClusterSession(t, strategy)
			a := c.nodes[0]
			ann, bob := c.browser(), c.browser()
			c.signInByEmail(ann, a, "ann@example.com")
			c.signInByEmail(bob, a, "bob@example.com")
			c.requestLink(c.browser(), a, "ann@example.com", c.origin()+"/") // pending, never opened
			require.Equal(t, 1, c.count("verification_tokens WHERE identifier = 'ann@example.com'"))

			c.admin(c.dbURL, "users", "delete", "ann@example.com").failed(t, 1, "standard input is not a terminal; pass --yes")
			require.Equal(t, 2, c.count("users"), "not confirmed: nothing deleted")
			require.Equal(t, "ann@example.com", ann.email(a))

			line := c.admin(c.dbURL, "users", "delete", "--yes", "ann@example.com").ok(t, "deleted user ann@example.com (")
			sessions := "0 sessions"
			if strategy == "database" {
				sessions = "1 session"
			}
			require.Contains(t, line, "): 0 accounts, "+sessions+", 1 pending sign-in token;")
			c.signedOutEverywhere(ann)
			require.Equal(t, 0, c.count("users WHERE email = 'ann@example.com'"))
			require.Equal(t, 0, c.count("verification_tokens WHERE identifier = 'ann@example.com'"))
			for _, in := range c.nodes {
				require.Equal(t, "bob@example.com", bob.email(in))
			}
			c.admin(c.dbURL, "users", "show", "ann@example.com").failed(t, 1, `no user with id or e-mail address "ann@example.com"`)
		})
	}
}

// signInAgainByEmail is signInByEmail for an address that was sent a
// link before: it opens the newest one.
func (c *cluster) signInAgainByEmail(b *browser, in *instance, addr string) {
	c.t.Helper()
	before := len(c.mailsTo(addr))
	c.requestLink(b, in, addr, c.origin()+"/home")
	require.Eventually(c.t, func() bool { return len(c.mailsTo(addr)) > before }, patience, 10*time.Millisecond)
	p, err := smtptest.Parse(c.mailsTo(addr)[before].Data)
	require.NoError(c.t, err)
	r := b.get(c.at(in, linkRE.FindString(p.Text)))
	require.Equal(c.t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(c.t, c.origin()+"/home", r.location())
}

// mailsTo are the e-mails sent to addr so far, oldest first.
func (c *cluster) mailsTo(addr string) []smtptest.Mail {
	var out []smtptest.Mail
	for _, m := range c.smtp.Mails() {
		if len(m.To) == 1 && m.To[0] == addr {
			out = append(out, m)
		}
	}
	return out
}

// signInByIdP signs br in on in through the OpenID Connect server as user.
// It returns where the callback sent the browser.
func (c *cluster) signInByIdP(br *browser, in *instance, user *mockoidc.MockUser) string {
	c.t.Helper()
	c.idp.QueueUser(user)
	r := br.post(in.url("/signin/idp"), url.Values{"csrfToken": {br.csrf(in)}, "callbackUrl": {c.origin() + "/app"}})
	require.Equal(c.t, http.StatusFound, r.StatusCode, r.body)
	r = br.get(r.location())
	require.Equal(c.t, http.StatusFound, r.StatusCode, r.body)
	r = br.get(c.at(in, r.location()))
	require.Equal(c.t, http.StatusFound, r.StatusCode, r.body)
	return r.location()
}

// `accounts unlink` removes the link (the user's session stays): the next
// sign-in with that identity follows the rules for an unlinked account
// whose address belongs to a user (OAuthAccountNotLinked, as next-auth).
func TestAdminUnlinkAccount(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	a, b := c.nodes[0], c.nodes[1]
	dan := &mockoidc.MockUser{Subject: "sub-dan", Email: "dan@example.com", EmailVerified: true, PreferredUsername: "dan"}
	br := c.browser()
	require.Equal(t, c.origin()+"/app", c.signInByIdP(br, a, dan))
	require.Equal(t, "dan@example.com", br.email(b))

	r := c.admin(c.dbURL, "users", "show", "dan@example.com")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "idp (account sub-dan")
	require.Regexp(t, `(?m)^database sessions:\s+1$`, r.stdout)

	c.admin(c.dbURL, "accounts", "unlink", "dan@example.com", "github").failed(t, 1, `has no account at provider "github" (linked: idp); nothing changed`)
	c.admin(c.dbURL, "accounts", "unlink", "--yes", "dan@example.com", "idp").ok(t, `unlinked 1 account at "idp" from user dan@example.com (`)
	require.Equal(t, 0, c.count("accounts"))
	require.Equal(t, "dan@example.com", br.email(a), "unlinking ends no session")

	other := c.browser()
	require.Equal(t, c.publicURL("/error?error=OAuthAccountNotLinked"), c.signInByIdP(other, b, dan),
		"the identity is no longer linked, and its address is dan's")
	require.Equal(t, 1, c.count("users"))
	c.admin(c.dbURL, "accounts", "unlink", "dan@example.com", "idp").failed(t, 1, `has no account at provider "idp" (linked: none)`)
}

// Bad input: one line on stderr, a non-zero exit (2 for the command line,
// 1 for an unknown user and such), nothing on stdout, nothing changed.
func TestAdminBadInput(t *testing.T) {
	c := startCluster(t, clusterOpts{instances: 1})
	ann := c.browser()
	c.signInByEmail(ann, c.nodes[0], "ann@example.com")
	for _, tc := range []struct {
		args []string
		code int
		what string
	}{
		{[]string{"users"}, 2, "users: missing command (one of: users list, users show, users delete, users create, users two-factor, users groups)"},
		{[]string{"users", "purge"}, 2, `users: unknown command "purge"`},
		{[]string{"users", "list", "--bogus"}, 2, "users list: flag provided but not defined: -bogus"},
		{[]string{"users", "show"}, 2, "users show: missing <email|id>"},
		{[]string{"users", "show", "a", "b"}, 2, "users show: too many arguments"},
		{[]string{"users", "show", "nobody@example.com"}, 1, `no user with id or e-mail address "nobody@example.com"`},
		{[]string{"users", "delete", "--yes", "nobody@example.com"}, 1, `no user with id or e-mail address "nobody@example.com"`},
		{[]string{"users", "delete", "ann@example.com"}, 1, "pass --yes"},
		{[]string{"sessions", "list", "--user", "nobody"}, 1, `no user with id or e-mail address "nobody"`},
		{[]string{"sessions", "revoke"}, 2, "give either --user <email|id> or --all"},
		{[]string{"sessions", "revoke", "--all", "--user", "ann@example.com"}, 2, "give either --user <email|id> or --all"},
		{[]string{"sessions", "revoke", "--all"}, 1, "pass --yes"},
		{[]string{"sessions", "revoke", "--user"}, 2, "flag needs an argument: -user"},
		{[]string{"sessions", "revoke", "--user", "nobody@example.com"}, 1, "no user with id or e-mail address"},
		{[]string{"accounts", "unlink", "ann@example.com"}, 2, "accounts unlink: missing <provider>"},
		{[]string{"accounts", "unlink", "ann@example.com", "idp"}, 1, `has no account at provider "idp"`},
	} {
		c.admin(c.dbURL, tc.args...).failed(t, tc.code, tc.what)
	}
	require.Equal(t, 1, c.count("users"))
	require.Equal(t, 1, c.count("sessions"))
	require.Equal(t, "ann@example.com", ann.email(c.nodes[0]), "nothing changed")

	// A database that does not answer is one line too, without its password.
	dead := mustURL(t, c.dbURL)
	dead.Host = "127.0.0.1:1"
	c.admin(dead.String(), "users", "list").failed(t, 1, "users list: open the database postgres://")
}

// The same on SQLite: a live instance on a database file, and a command
// run beside it on that file, whose revocation the instance sees at once.
func TestAdminOnSQLite(t *testing.T) {
	c := newCluster(t, "postgres://unused@127.0.0.1/unused") // only the config, mail and IdP are used
	dbFile := filepath.Join(c.dir, "latchkey.db")
	port := freePort(t)
	in, err := c.spawn("S", port, c.env(port, dbFile))
	require.NoError(t, err)
	in.waitReady(t)
	c.nodes = []*instance{in}
	c.proxy.add(in.origin)
	ann, bob := c.browser(), c.browser()
	c.signInByEmail(ann, in, "ann@example.com")
	c.signInByEmail(bob, in, "bob@example.com")

	r := c.admin(dbFile, "users", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "ann@example.com")
	require.True(t, strings.HasSuffix(r.stdout, "\n2 users\n"), r.stdout)
	c.admin(dbFile, "sessions", "revoke", "--user", "ann@example.com").ok(t, "revoked the sessions of user ann@example.com (")
	require.Empty(t, ann.email(in), "the database session ended at once")
	require.Equal(t, "bob@example.com", bob.email(in))
}
