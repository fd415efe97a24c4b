package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// hookReceiver is a webhook endpoint that verifies every delivery with
// the Standard Webhooks reference library (not latchkey's code) and keeps
// the verified ones; an unverifiable request is answered 401 and counted.
type hookReceiver struct {
	t      testing.TB
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	got    []hookEvent
	forged int
}

type hookEvent struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

func newHookReceiver(t testing.TB) *hookReceiver {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	r := &hookReceiver{t: t, secret: "whsec_" + base64.StdEncoding.EncodeToString(key)}
	wh, err := standardwebhooks.NewWebhook(r.secret)
	require.NoError(t, err)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := wh.Verify(body, req.Header); err != nil {
			r.forged++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev hookEvent
		require.NoError(t, json.Unmarshal(body, &ev))
		require.Equal(t, ev.ID, req.Header.Get("webhook-id"))
		r.got = append(r.got, ev)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// configure points c's webhooks at the receiver, polled every 100 ms.
func (r *hookReceiver) configure(c *config.Config) {
	c.Webhooks.PollInterval = config.Duration(100 * time.Millisecond)
	c.Webhooks.Endpoints = []config.WebhookEndpoint{{Name: "rx", URL: r.srv.URL + "/hooks", SecretEnv: "RX_SECRET", Secrets: []string{r.secret}}}
}

// of is the verified events of type typ so far.
func (r *hookReceiver) of(typ string) []hookEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hookEvent
	for _, ev := range r.got {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// waitFor waits until n events of typ arrived and returns them.
func (r *hookReceiver) waitFor(typ string, n int) []hookEvent {
	r.t.Helper()
	require.Eventually(r.t, func() bool { return len(r.of(typ)) >= n }, 10*time.Second, 20*time.Millisecond, "%d %s", n, typ)
	return r.of(typ)
}

// runBackground runs the app's background work (the webhook worker among
// it) as the service does, by serving on a spare loopback listener.
func runBackground(t testing.TB, e *env) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.app.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
}

// An e-mail sign-in reaches a real receiver as exactly one verified
// session.created naming the user and the strategy, with the new user's
// user.created; the sign-out as session.ended for that same session. A
// replayed link signs nobody in and reports nothing. Both strategies,
// SQLite and PostgreSQL.
func TestWebhooksReportSignInAndSignOut(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rx := newHookReceiver(t)
			e := startMail(t, b.opts(envOpts{config: rx.configure}))
			runBackground(t, e)
			c := e.browser()
			link := e.emailLink(c, "ann@example.com", e.origin+"/")
			require.Equal(t, http.StatusFound, e.get(c, link).StatusCode)
			_, uid := e.sessionUser(c)
			require.NotEmpty(t, uid)

			created := rx.waitFor("session.created", 1)
			require.Equal(t, uid, created[0].Data["user_id"])
			require.Equal(t, "email", created[0].Data["provider"])
			require.Equal(t, b.strategy, created[0].Data["strategy"])
			sid, _ := created[0].Data["session_id"].(string)
			require.NotEmpty(t, sid)
			users := rx.waitFor("user.created", 1)
			require.Equal(t, uid, users[0].Data["user"].(map[string]any)["id"])

			other := e.browser()
			e.get(other, link) // the spent link, again
			require.Empty(t, e.session(other), "the replay signed nobody in")

			require.Equal(t, http.StatusFound, e.form(c, "/signout").StatusCode)
			ended := rx.waitFor("session.ended", 1)
			require.Equal(t, map[string]any{"user_id": uid, "session_id": sid, "strategy": b.strategy, "scope": "one",
				"reason": "signout", "actor": "user"}, ended[0].Data)

			time.Sleep(500 * time.Millisecond) // five polls: anything more would have arrived
			require.Len(t, rx.of("session.created"), 1, "exactly one sign-in reported")
			require.Len(t, rx.of("session.ended"), 1)
			require.Zero(t, rx.forged)
		})
	}
}

// A sign-in the SignIn callback refuses writes no session and reports
// none; the webhook endpoint hears of nothing at all.
func TestWebhooksReportNoRefusedSignIn(t *testing.T) {
	rx := newHookReceiver(t)
	refuse := &signin.Hooks{SignIn: func(_ context.Context, in signin.SignInInput) (bool, string) {
		return in.VerificationRequest, "" // the link is sent; its use is refused
	}}
	e := startMail(t, envOpts{config: rx.configure, hooks: refuse, smtp: &smtptest.Options{}})
	runBackground(t, e)
	c := e.browser()
	link := e.emailLink(c, "bob@example.com", e.origin+"/")
	e.get(c, link)
	require.Empty(t, e.session(c))
	time.Sleep(500 * time.Millisecond)
	rx.mu.Lock()
	defer rx.mu.Unlock()
	require.Empty(t, rx.got, "a refused sign-in reports nothing")
}
