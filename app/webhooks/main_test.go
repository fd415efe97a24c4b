package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// pg is the PostgreSQL server of the worker tests that run on both
// dialects, started on first use.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// newSecret is a fresh whsec_ secret.
func newSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// received is one request a receiver verified.
type received struct {
	ID, Timestamp, Signature string
	Body                     []byte
}

// receiver is a real HTTP endpoint that verifies every request with
// Standard Webhooks' reference library, as a customer's would, under each
// of its secrets, and answers what answer says (200 by default).
type receiver struct {
	t       *testing.T
	srv     *httptest.Server
	secrets []string
	answer  func(r received) int

	mu   sync.Mutex
	got  []received
	bad  []string // why requests failed verification
	byID map[string]int
}

func newReceiver(t *testing.T, secrets ...string) *receiver {
	t.Helper()
	rc := &receiver{t: t, secrets: secrets, byID: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := received{ID: r.Header.Get("webhook-id"), Timestamp: r.Header.Get("webhook-timestamp"), Signature: r.Header.Get("webhook-signature"), Body: body}
	for _, sec := range rc.secrets {
		wh, err := standardwebhooks.NewWebhook(sec)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		if err != nil {
			rc.mu.Lock()
			rc.bad = append(rc.bad, rec.ID+": "+err.Error())
			rc.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") != "latchkey-webhooks" {
		rc.mu.Lock()
		rc.bad = append(rc.bad, rec.ID+": headers "+r.Header.Get("Content-Type")+" "+r.Header.Get("User-Agent"))
		rc.mu.Unlock()
	}
	status := http.StatusOK
	if rc.answer != nil {
		status = rc.answer(rec)
	}
	rc.mu.Lock()
	rc.got = append(rc.got, rec)
	if status/100 == 2 {
		rc.byID[rec.ID]++
	}
	rc.mu.Unlock()
	w.WriteHeader(status)
}

// requests is a copy of what arrived and verified.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// delivered counts the 2xx answers per event id.
func (rc *receiver) delivered() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for k, v := range rc.byID {
		out[k] = v
	}
	return out
}

func (rc *receiver) requireAllVerified() {
	rc.t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.Empty(rc.t, rc.bad)
}

func (rc *receiver) endpoint(name string, secrets ...string) Endpoint {
	return Endpoint{Name: name, URL: rc.srv.URL + "/hook?token=url-secret", Secrets: secrets}
}
