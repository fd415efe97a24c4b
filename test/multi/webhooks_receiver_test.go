package multi_test

// The webhook tests' receiver and helpers. The receiver is an HTTP server
// on loopback that checks every request with the Standard Webhooks
// reference library for Go (an implementation independent of latchkey's
// signing), answers as the test tells it, and records every attempt with
// its times, so that the tests can judge delivery by what arrived, as the
// operator's service would see it.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
)

const (
	// hookEndpoint is the endpoint's name in the config (the metrics' label).
	hookEndpoint = "receiver"
	// hookSecretEnv names the environment variable holding its secret.
	hookSecretEnv = "LATCHKEY_WEBHOOK_RECEIVER_SECRET"
)

// hookSchedule is webhooks.retry_schedule in these tests: short, so that a
// minute of failures is many attempts, and long enough in total (86 s,
// at least 68 s with -20 % jitter) that no event runs out of attempts
// during that minute.
const hookSchedule = "[1s, 2s, 3s, 5s, 5s, 10s, 10s, 10s, 10s, 10s, 10s, 10s]"

// newHookSecret is a fresh whsec_ secret (32 random bytes, as Svix makes).
func newHookSecret(t *testing.T) string {
	t.Helper()
	key := make([]byte, 32)
	_, err := rand.Read(key)
	require.NoError(t, err)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// hooksConfig is the webhooks: block for one endpoint at target, with the
// secret in hookSecretEnv; the worker polls every 200 ms and a request
// times out after 2 s (its lease is then 32 s: what a killed worker's
// events wait before another worker takes them).
func hooksConfig(target string) string {
	return fmt.Sprintf(`webhooks:
  timeout: 2s
  poll_interval: 200ms
  retry_schedule: %s
  endpoints:
    - name: %s
      url: %q
      secret_env: %s
`, hookSchedule, hookEndpoint, target, hookSecretEnv)
}

// hookEvent is a webhook's body.
type hookEvent struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

// str is a string field of the event's data ("" when absent).
func (e hookEvent) str(key string) string {
	v, _ := e.Data[key].(string)
	return v
}

// attempt is one request the receiver got.
type attempt struct {
	id       string // webhook-id
	body     []byte
	event    hookEvent
	status   int // what the receiver answered
	arrived  time.Time
	finished time.Time // just before the answer was written
	problem  string    // why the request was refused (signature, headers, body), "" when it was not
}

// receiver is the operator's webhook endpoint.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	hooks  []*standardwebhooks.Webhook
	answer func(a *attempt, previous int) (status int, hold time.Duration)

	mu       sync.Mutex
	attempts []*attempt
	byID     map[string][]*attempt
}

// newReceiver starts a receiver that accepts a request signed with any one
// of secrets. answer decides, for a verified attempt and the number of
// attempts of its id before it, the status and how long to hold the
// request first; nil answers 200 at once.
func newReceiver(t *testing.T, answer func(a *attempt, previous int) (int, time.Duration), secrets ...string) *receiver {
	t.Helper()
	r := &receiver{t: t, answer: answer, byID: map[string][]*attempt{}}
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		require.NoError(t, err)
		r.hooks = append(r.hooks, wh)
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// url is where the endpoint points: a literal loopback address over http,
// which latchkey allows without allow_private.
func (r *receiver) url() string { return r.srv.URL + "/hooks/latchkey" }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	a := &attempt{arrived: time.Now(), id: req.Header.Get(standardwebhooks.HeaderWebhookID)}
	body, err := io.ReadAll(req.Body)
	a.body = body
	switch {
	case err != nil:
		a.problem = "reading the body: " + err.Error()
	case req.Method != http.MethodPost:
		a.problem = "method " + req.Method
	case !strings.HasPrefix(req.Header.Get("Content-Type"), "application/json"):
		a.problem = "Content-Type " + req.Header.Get("Content-Type")
	default:
		a.problem = r.verify(body, req.Header)
	}
	if a.problem == "" {
		if err := json.Unmarshal(body, &a.event); err != nil {
			a.problem = "body is not an event: " + err.Error()
		} else if a.event.ID != a.id {
			a.problem = fmt.Sprintf("body id %q, webhook-id %q", a.event.ID, a.id)
		}
	}
	status, hold := http.StatusUnauthorized, time.Duration(0)
	r.mu.Lock()
	previous := len(r.byID[a.id])
	r.mu.Unlock()
	if a.problem == "" {
		status, hold = http.StatusOK, 0
		if r.answer != nil {
			status, hold = r.answer(a, previous)
		}
	}
	time.Sleep(hold)
	a.status = status
	a.finished = time.Now()
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.byID[a.id] = append(r.byID[a.id], a)
	r.mu.Unlock()
	w.WriteHeader(status)
}

// verify checks the signature with each secret the receiver knows; ""
// when one of them verifies it.
func (r *receiver) verify(body []byte, h http.Header) string {
	var errs []string
	for _, wh := range r.hooks {
		err := wh.Verify(body, h)
		if err == nil {
			return ""
		}
		errs = append(errs, err.Error())
	}
	return "signature: " + strings.Join(errs, "; ")
}

// snapshot is every attempt so far, in arrival order.
func (r *receiver) snapshot() []*attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]*attempt(nil), r.attempts...)
	sort.Slice(out, func(i, j int) bool { return out[i].arrived.Before(out[j].arrived) })
	return out
}

// delivered is, per event id, its first attempt answered 2xx.
func (r *receiver) delivered() map[string]*attempt {
	out := map[string]*attempt{}
	for _, a := range r.snapshot() {
		if a.status/100 == 2 && out[a.id] == nil {
			out[a.id] = a
		}
	}
	return out
}

// ofType is the delivered events of a type, by id.
func (r *receiver) ofType(typ string) map[string]hookEvent {
	out := map[string]hookEvent{}
	for id, a := range r.delivered() {
		if a.event.Type == typ {
			out[id] = a.event
		}
	}
	return out
}

// waitFor polls cond until it holds or limit passes, then fails the test
// with what.
func (r *receiver) waitFor(limit time.Duration, what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("webhooks: not within %s: %s (%d attempts received)", limit, what, len(r.snapshot()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForNone polls missing until it returns nothing or limit passes,
// then fails the test with what and the first few of what is missing.
func (r *receiver) waitForNone(limit time.Duration, what string, missing func() []string) {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		left := missing()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("webhooks: not within %s: %s; %d missing (%d attempts received), the first:\n%s", limit, what, len(left), len(r.snapshot()), firstFew(left))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkAll asserts what every attempt must be, whatever the test: signed
// with a known secret, a JSON event whose id is the webhook-id, and every
// attempt of an id with the same body, byte for byte. No body carries the
// secret.
func (r *receiver) checkAll(secrets ...string) {
	r.t.Helper()
	first := map[string][]byte{}
	for _, a := range r.snapshot() {
		require.Empty(r.t, a.problem, "attempt of %s at %s refused", a.id, a.arrived.Format("15:04:05.000"))
		require.True(r.t, strings.HasPrefix(a.id, "evt_"), "webhook-id %q", a.id)
		require.NotEmpty(r.t, a.event.Type)
		_, err := time.Parse(time.RFC3339Nano, a.event.Timestamp)
		require.NoError(r.t, err, "timestamp of %s", a.id)
		if b, ok := first[a.id]; ok {
			require.True(r.t, bytes.Equal(b, a.body), "event %s: a retry's body differs:\n%s\n%s", a.id, b, a.body)
		} else {
			first[a.id] = a.body
		}
		for _, s := range secrets {
			require.NotContains(r.t, string(a.body), strings.TrimPrefix(s, "whsec_"))
		}
	}
}

// sessionRowsByUser is the sessions table: session id → user id.
func (c *cluster) sessionRowsByUser() map[string]string {
	return c.pairs("SELECT id, user_id FROM sessions")
}

// usersByID is the users table: user id → e-mail address.
func (c *cluster) usersByID() map[string]string {
	return c.pairs("SELECT id, email FROM users")
}

// pairs reads a two-column query into a map.
func (c *cluster) pairs(query string) map[string]string {
	c.t.Helper()
	rows, err := c.sql().Query(query)
	require.NoError(c.t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		require.NoError(c.t, rows.Scan(&k, &v))
		out[k] = v
	}
	require.NoError(c.t, rows.Err())
	return out
}

// outboxByStatus counts the outbox's rows (one per event and endpoint) by
// status.
func (c *cluster) outboxByStatus() map[string]string {
	return c.pairs("SELECT status, count(*)::text FROM webhook_deliveries GROUP BY status")
}

// requireNoSecretLogged asserts that no process of the cluster logged the
// webhook secret.
func (c *cluster) requireNoSecretLogged(secret string) {
	c.t.Helper()
	key := strings.TrimPrefix(secret, "whsec_")
	for _, in := range c.nodes {
		require.NotContains(c.t, in.logs.String(), key, "instance %s logged the webhook secret", in.name)
	}
}

// ---- sign-ins from many goroutines (errors returned, not asserted) ----

// askLink posts the e-mail sign-in form on in for addr.
func (c *cluster) askLink(b *browser, in *instance, addr string) error {
	r, err := b.getErr(in.url("/csrf"))
	if err != nil {
		return err
	}
	var v struct{ CsrfToken string }
	if err := json.Unmarshal([]byte(r.body), &v); err != nil || v.CsrfToken == "" {
		return fmt.Errorf("GET /csrf: %d %s", r.StatusCode, r.body)
	}
	form := url.Values{"csrfToken": {v.CsrfToken}, "email": {addr}, "callbackUrl": {c.origin() + "/home"}}
	req, _ := http.NewRequest(http.MethodPost, in.url("/signin/email"), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r, err = b.do(req)
	if err != nil {
		return err
	}
	if r.StatusCode != http.StatusFound || !strings.Contains(r.location(), "/verify-request") {
		return fmt.Errorf("POST /signin/email for %s: %d %s %s", addr, r.StatusCode, r.location(), r.body)
	}
	return nil
}

// openLink opens a sign-in link (already rewritten to an instance) and
// reports whether it signed the browser in.
func (c *cluster) openLink(b *browser, link string) error {
	r, err := b.getErr(link)
	if err != nil {
		return err
	}
	if r.StatusCode != http.StatusFound || r.location() != c.origin()+"/home" {
		return fmt.Errorf("link: %d %s %s", r.StatusCode, r.location(), r.body)
	}
	return nil
}

// emailSignIn is a whole e-mail sign-in of a fresh browser on in.
func (c *cluster) emailSignIn(mb *mailbox, in *instance, addr string) error {
	b := c.browser()
	defer b.client.Transport.(*http.Transport).CloseIdleConnections()
	if err := c.askLink(b, in, addr); err != nil {
		return err
	}
	link := mb.wait(addr, patience)
	if link == "" {
		return fmt.Errorf("no e-mail to %s", addr)
	}
	rest, ok := strings.CutPrefix(link, c.base)
	if !ok {
		return fmt.Errorf("link %s is not below SERVICE_URL", link)
	}
	return c.openLink(b, in.url(rest))
}

// getErr is GET target, for any goroutine.
func (b *browser) getErr(target string) (resp, error) {
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return resp{}, err
	}
	return b.do(req)
}

// inParallel runs fn(i) for i in [0, n) on workers goroutines and returns
// the errors, in order of i.
func inParallel(n, workers int, fn func(i int) error) []error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}
