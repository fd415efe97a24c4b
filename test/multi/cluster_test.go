package multi_test

// The harness: a "cluster" is one PostgreSQL database, an SMTP catcher, an
// OpenID Connect server, a round-robin reverse proxy and N latchkey
// processes started from the binary TestMain built, all with the same
// SERVICE_URL (the proxy's address), AUTH_SECRET, DATABASE_URL and config
// file. Tests reach a chosen instance directly (instance.url) so that "on A,
// then on B" is deterministic; the public URLs latchkey writes (e-mail
// links, OAuth redirect_uri, callback URLs) name the proxy, and
// instance.at rewrites one to an instance. Cookies are host-only to
// 127.0.0.1, and a cookie jar ignores ports, so one browser's cookies
// reach every instance and the proxy alike, as they would behind one
// public host.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/test/testport"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

const (
	// authSecret is every instance's AUTH_SECRET: CSRF cookies, e-mail link
	// bindings and OAuth check cookies made by one must open on another.
	authSecret = "multi-secret-0123456789abcdef0123456789abcdef"
	// dbPassword is written into every DATABASE_URL. The test clusters trust
	// loopback connections, so it is never checked; it is there so that
	// every test can assert that no log line repeats it.
	dbPassword = "pg-password-never-logged"
	// basePath is latchkey's default base path, kept by SERVICE_URL.
	basePath = "/api/auth"
	// sessionCookie is the database session's cookie (next-auth v4 names, http).
	sessionCookie = "next-auth.session-token"
	// patience bounds every wait: generous, as the machine may be slow.
	patience = 60 * time.Second
)

// LATCHKEY_MULTI_LOGS=1 prints every process's log at the end of its test,
// not only when the test fails.

// clusterOpts shape one cluster; the zero value is two instances on a fresh
// database of the shared server.
type clusterOpts struct {
	instances int    // 0: 2
	adminURL  string // the PostgreSQL server; "": the one TestMain shares
	// rateLimit is the e-mail provider's rate_limit block (YAML, indented
	// six spaces); "": off.
	rateLimit string
	// extraConfig is appended to the config file (top-level YAML keys,
	// e.g. a session: or cookies: block); "": nothing.
	extraConfig string
	// idpProvider is added to the idp provider's block (YAML, indented
	// four spaces, e.g. "    store_tokens: true\n"); "": nothing.
	idpProvider string
	// idpWrap is mockoidc middleware around each of its endpoints (e.g.
	// test/refreshidp's); nil: none.
	idpWrap func(http.Handler) http.Handler
	// env is more environment for every process of the cluster (NAME=value),
	// e.g. a webhook endpoint's secret.
	env []string
}

// cluster is one deployment: a database and the processes serving it.
type cluster struct {
	t      *testing.T
	dir    string
	dbURL  string // DATABASE_URL, with dbPassword
	base   string // SERVICE_URL: the proxy's origin + basePath
	config string // the config file every instance reads
	smtp   *smtptest.Server
	idp    *mockoidc.MockOIDC
	proxy  *roundRobin
	nodes  []*instance
	// extraEnv is added to every process's environment (clusterOpts.env).
	extraEnv []string

	dbOnce sync.Once
	db     *sql.DB
}

// startCluster starts the cluster and waits until every instance answers.
func startCluster(t *testing.T, o clusterOpts) *cluster {
	t.Helper()
	if o.instances == 0 {
		o.instances = 2
	}
	if o.adminURL == "" {
		o.adminURL = adminURL
	}
	c := newClusterOpts(t, pgtest.NewDatabase(t, o.adminURL), o)
	if o.extraConfig != "" {
		c.appendConfig(o.extraConfig)
	}
	c.extraEnv = o.env
	c.nodes = c.launchAll(o.instances)
	for _, in := range c.nodes {
		in.waitReady(t)
	}
	return c
}

// newCluster prepares everything but the latchkey processes: the proxy, the
// SMTP catcher, the IdP and the config file, for the database at dbURL.
func newCluster(t *testing.T, dbURL string) *cluster {
	t.Helper()
	return newClusterWith(t, dbURL, "")
}

// newClusterWith is newCluster with the e-mail provider's rate_limit block.
func newClusterWith(t *testing.T, dbURL, rateLimit string) *cluster {
	t.Helper()
	return newClusterOpts(t, dbURL, clusterOpts{rateLimit: rateLimit})
}

// newClusterOpts is newCluster shaped by o's rateLimit, idpProvider and
// idpWrap.
func newClusterOpts(t *testing.T, dbURL string, o clusterOpts) *cluster {
	t.Helper()
	rateLimit := o.rateLimit
	c := &cluster{t: t, dir: t.TempDir(), dbURL: withPassword(t, dbURL)}
	c.proxy = &roundRobin{}
	srv := httptest.NewServer(c.proxy)
	t.Cleanup(srv.Close)
	c.base = srv.URL + basePath

	c.smtp = smtptest.Start(t, smtptest.Options{})
	idp, err := mockoidc.NewServer(nil)
	require.NoError(t, err)
	if o.idpWrap != nil {
		require.NoError(t, idp.AddMiddleware(o.idpWrap))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, idp.Start(ln, nil))
	t.Cleanup(func() { _ = idp.Shutdown() })
	c.idp = idp

	// The rate limits are off unless a test asks: the rounds of the race
	// test all come from 127.0.0.1.
	if rateLimit == "" {
		rateLimit = "      disabled: true\n"
	}
	cfg := fmt.Sprintf(`providers:
  - id: idp
    type: oidc
    name: Test IdP
    issuer: %q
    client_id: %q
    client_secret: %q
%s  - id: email
    type: email
    server: %q
    from: "Sign in <no-reply@example.com>"
    rate_limit:
%scallbacks:
  expose_user_id: true
`, idp.Issuer(), idp.Config().ClientID, idp.Config().ClientSecret, o.idpProvider, c.smtp.URL("smtp", ""), rateLimit)
	c.config = filepath.Join(c.dir, "config.yaml")
	require.NoError(t, os.WriteFile(c.config, []byte(cfg), 0o600))
	return c
}

// appendConfig adds top-level YAML to the config file.
func (c *cluster) appendConfig(yaml string) {
	c.t.Helper()
	f, err := os.OpenFile(c.config, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(c.t, err)
	_, err = f.WriteString(yaml)
	require.NoError(c.t, errors.Join(err, f.Close()))
}

// withPassword puts dbPassword into a PostgreSQL URL.
func withPassword(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), dbPassword)
	return u.String()
}

// env is a process's whole environment, nothing inherited from the test's;
// port 0 leaves PORT unset (for sub-commands).
func (c *cluster) env(port int, dbURL string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + c.dir,
		"SERVICE_URL=" + c.base,
		"AUTH_SECRET=" + authSecret,
		"DATABASE_URL=" + dbURL,
		"LOG_LEVEL=debug", // every log line the code has, for the secrets check
	}
	if port != 0 {
		env = append(env, "PORT="+strconv.Itoa(port))
	}
	return append(env, c.extraEnv...)
}

// launchAll starts n instances at the same moment, without waiting for
// them to answer, and puts them behind the proxy.
func (c *cluster) launchAll(n int) []*instance {
	c.t.Helper()
	nodes := make([]*instance, n)
	ports := make([]int, n)
	for i := range nodes {
		ports[i] = freePort(c.t)
	}
	var start, started sync.WaitGroup
	start.Add(1)
	errs := make([]error, n)
	for i := range nodes {
		started.Add(1)
		go func() {
			defer started.Done()
			start.Wait()
			nodes[i], errs[i] = c.spawn(string(rune('A'+i)), ports[i], c.env(ports[i], c.dbURL))
		}()
	}
	start.Done()
	started.Wait()
	for i, err := range errs {
		require.NoError(c.t, err, "start instance %d", i)
	}
	for _, in := range nodes {
		c.proxy.add(in.origin)
	}
	return nodes
}

// run starts one more process of the binary with env and args (a
// sub-command, or a server that is expected not to start) and returns it.
func (c *cluster) run(name string, env []string, args ...string) *instance {
	c.t.Helper()
	in, err := c.spawn(name, 0, env, args...)
	require.NoError(c.t, err)
	return in
}

// instance is one latchkey process.
type instance struct {
	name   string
	origin string // http://127.0.0.1:PORT, "" for a sub-command
	cmd    *exec.Cmd
	logs   *logBuffer
	done   chan struct{} // closed when the process has exited
}

// spawn starts the binary with --config and args; the test's clean-up stops
// it and checks its logs.
func (c *cluster) spawn(name string, port int, env []string, args ...string) (*instance, error) {
	in := &instance{name: name, logs: &logBuffer{}, done: make(chan struct{})}
	if port != 0 {
		in.origin = "http://127.0.0.1:" + strconv.Itoa(port)
	}
	in.cmd = exec.Command(binary, append([]string{"--config", c.config}, args...)...)
	in.cmd.Env = env
	in.cmd.Dir = c.dir
	in.cmd.Stdout, in.cmd.Stderr = in.logs, in.logs
	if err := in.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = in.cmd.Wait(); close(in.done) }()
	t := c.t
	t.Cleanup(func() {
		in.stop(t)
		logs := in.logs.String()
		// Whatever happened, no log line may carry a secret or a panic.
		for _, bad := range []string{dbPassword, authSecret, "panic", "goroutine "} {
			if strings.Contains(logs, bad) {
				t.Errorf("instance %s logged %q", in.name, bad)
			}
		}
		if t.Failed() || os.Getenv("LATCHKEY_MULTI_LOGS") != "" {
			t.Logf("--- instance %s (exit %d):\n%s", in.name, in.cmd.ProcessState.ExitCode(), logs)
		}
	})
	return in, nil
}

// stop ends the process (SIGTERM, then SIGKILL) and waits for it.
func (in *instance) stop(t *testing.T) {
	select {
	case <-in.done:
		return
	default:
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.done:
	case <-time.After(20 * time.Second):
		t.Errorf("instance %s ignored SIGTERM", in.name)
		_ = in.cmd.Process.Kill()
		<-in.done
	}
}

// exitCode waits for the process to end by itself and returns its code.
func (in *instance) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-in.done:
	case <-time.After(patience):
		t.Fatalf("instance %s still runs; logs:\n%s", in.name, in.logs)
	}
	return in.cmd.ProcessState.ExitCode()
}

// running reports whether the process has not exited.
func (in *instance) running() bool {
	select {
	case <-in.done:
		return false
	default:
		return true
	}
}

// waitReady waits until the instance answers GET /csrf (which needs no
// database), failing at once if the process exits.
func (in *instance) waitReady(t *testing.T) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) {
		if !in.running() {
			t.Fatalf("instance %s exited with %d before answering; logs:\n%s", in.name, in.cmd.ProcessState.ExitCode(), in.logs)
		}
		if res, err := client.Get(in.url("/csrf")); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("instance %s did not answer within %s; logs:\n%s", in.name, patience, in.logs)
}

// url is the instance's URL of a path below the base path.
func (in *instance) url(path string) string { return in.origin + basePath + path }

// at rewrites a public URL (the proxy's) to the same URL on this instance.
func (c *cluster) at(in *instance, public string) string {
	c.t.Helper()
	rest, ok := strings.CutPrefix(public, c.base)
	require.True(c.t, ok, "%s is not below SERVICE_URL %s", public, c.base)
	return in.url(rest)
}

// publicURL is SERVICE_URL's URL of a path below the base path.
func (c *cluster) publicURL(path string) string { return c.base + path }

// origin is SERVICE_URL's origin (the proxy's), where callback URLs point.
func (c *cluster) origin() string { return strings.TrimSuffix(c.base, basePath) }

// ---- the proxy ----

// roundRobin is the load balancer in front of the instances: each request
// goes to the next one, no stickiness. served counts the requests each
// backend answered.
type roundRobin struct {
	mu       sync.Mutex
	backends []*httputil.ReverseProxy
	origins  []string
	next     atomic.Uint64
	served   sync.Map // origin → *atomic.Int64
}

func (p *roundRobin) add(origin string) {
	u, _ := url.Parse(origin)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = append(p.backends, httputil.NewSingleHostReverseProxy(u))
	p.origins = append(p.origins, origin)
	p.served.LoadOrStore(origin, new(atomic.Int64))
}

func (p *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if len(p.backends) == 0 {
		p.mu.Unlock()
		http.Error(w, "no instance", http.StatusBadGateway)
		return
	}
	i := int(p.next.Add(1)-1) % len(p.backends)
	backend, origin := p.backends[i], p.origins[i]
	p.mu.Unlock()
	n, _ := p.served.Load(origin)
	n.(*atomic.Int64).Add(1)
	backend.ServeHTTP(w, r)
}

// count is how many requests the proxy sent to origin.
func (p *roundRobin) count(origin string) int64 {
	n, ok := p.served.Load(origin)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// ---- browsers ----

// browser is one user agent: a cookie jar, never following redirects by
// itself (each test decides where the next hop lands).
type browser struct {
	t      *testing.T
	client *http.Client
}

func (c *cluster) browser() *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(c.t, err)
	// Its own connections, closed when the test ends: an instance's
	// graceful shutdown waits up to 5 s for a connection that was opened
	// but never sent a request (the client dials spares for parallel
	// requests), which would make every stop slow.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	c.t.Cleanup(transport.CloseIdleConnections)
	return &browser{t: c.t, client: &http.Client{
		Jar:           jar,
		Transport:     transport,
		Timeout:       patience,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// resp is a fully read response.
type resp struct {
	*http.Response
	body string
}

func (r resp) location() string { return r.Header.Get("Location") }

// do sends req with the browser's cookies and reads the answer. It may run
// on any goroutine: failures are returned, not asserted.
func (b *browser) do(req *http.Request) (resp, error) {
	res, err := b.client.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{}, err
	}
	return resp{res, string(body)}, nil
}

func (b *browser) get(target string) resp {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	require.NoError(b.t, err)
	r, err := b.do(req)
	require.NoError(b.t, err, "GET %s", target)
	return r
}

func (b *browser) post(target string, form url.Values) resp {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r, err := b.do(req)
	require.NoError(b.t, err, "POST %s", target)
	return r
}

// csrf is the first half of the CSRF dance on in: the cookie lands in the
// jar, the token is returned.
func (b *browser) csrf(in *instance) string {
	b.t.Helper()
	r := b.get(in.url("/csrf"))
	require.Equal(b.t, http.StatusOK, r.StatusCode, r.body)
	var v struct{ CsrfToken string }
	require.NoError(b.t, json.Unmarshal([]byte(r.body), &v))
	require.Len(b.t, v.CsrfToken, 64)
	return v.CsrfToken
}

// session is the body of GET target, a /session URL ({} when signed out).
func (b *browser) session(target string) map[string]any {
	b.t.Helper()
	r := b.get(target)
	require.Equal(b.t, http.StatusOK, r.StatusCode, r.body)
	var s map[string]any
	require.NoError(b.t, json.Unmarshal([]byte(r.body), &s), r.body)
	return s
}

// email is the signed-in user's address at in, "" when signed out.
func (b *browser) email(in *instance) string {
	b.t.Helper()
	return userEmail(b.session(in.url("/session")))
}

func userEmail(s map[string]any) string {
	u, _ := s["user"].(map[string]any)
	v, _ := u["email"].(string)
	return v
}

// cookie is the jar's value of a cookie sent to the base path.
func (b *browser) cookie(name string) string {
	u, _ := url.Parse("http://127.0.0.1" + basePath + "/")
	for _, ck := range b.client.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// signOut posts the sign-out form on in.
func (b *browser) signOut(in *instance) resp {
	b.t.Helper()
	return b.post(in.url("/signout"), url.Values{"csrfToken": {b.csrf(in)}})
}

// ---- e-mail ----

// requestLink is the e-mail sign-in form on in, asserted to reach the
// "check your e-mail" page.
func (c *cluster) requestLink(b *browser, in *instance, addr, callbackURL string) {
	c.t.Helper()
	r := b.post(in.url("/signin/email"), url.Values{"csrfToken": {b.csrf(in)}, "email": {addr}, "callbackUrl": {callbackURL}})
	require.Equal(c.t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(c.t, c.publicURL("/verify-request?provider=email&type=email"), r.location())
}

var linkRE = regexp.MustCompile(`https?://\S+/callback/email\?\S+`)

// linkFor waits for the sign-in e-mail to addr and returns its link.
func (c *cluster) linkFor(addr string) string {
	c.t.Helper()
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) {
		for _, m := range c.smtp.Mails() {
			if len(m.To) != 1 || m.To[0] != addr {
				continue
			}
			p, err := smtptest.Parse(m.Data)
			require.NoError(c.t, err)
			link := linkRE.FindString(p.Text)
			require.NotEmpty(c.t, link, "no link in %q", p.Text)
			return link
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no e-mail to %s within %s", addr, patience)
	return ""
}

// signInByEmail signs b in as addr on in, link requested and opened there.
func (c *cluster) signInByEmail(b *browser, in *instance, addr string) {
	c.t.Helper()
	c.requestLink(b, in, addr, c.origin()+"/home")
	r := b.get(c.at(in, c.linkFor(addr)))
	require.Equal(c.t, http.StatusFound, r.StatusCode, r.body)
	require.Equal(c.t, c.origin()+"/home", r.location())
}

// ---- the database ----

// sql is a handle on the cluster's database, for looking at rows.
func (c *cluster) sql() *sql.DB {
	c.dbOnce.Do(func() { c.db = sqlDB(c.t, c.dbURL) })
	return c.db
}

// sqlDB opens the database at url for the rest of the test.
func sqlDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// count is SELECT count(*) of a query's FROM and WHERE part.
func (c *cluster) count(fromWhere string, args ...any) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	var n int
	require.NoError(c.t, c.sql().QueryRowContext(ctx, "SELECT count(*) FROM "+fromWhere, args...).Scan(&n))
	return n
}

// ---- odds and ends ----

func freePort(t *testing.T) int {
	t.Helper()
	return testport.MustFree(t)
}

// logBuffer collects a process's output; os/exec writes from its own goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
