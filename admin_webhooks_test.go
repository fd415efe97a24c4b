package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// webhooksYAML configures two endpoints; "gone" is an endpoint some
// events were queued for before it was removed from the file.
const webhooksYAML = `webhooks:
  endpoints:
    - name: crm
      url: https://crm.example.com/hooks/latchkey?token=receiver-token
      secret_env: TEST_CRM_SECRET
    - name: audit
      url: http://localhost:9/audit
      secret_env: TEST_AUDIT_SECRET
      enabled: false
`

// testSecret is a well-formed whsec_ secret, never to appear in output.
var testSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// `webhooks list|show|retry|retry-failed` on SQLite and PostgreSQL: the
// outbox's rows newest first, filtered and paged, an event's body and
// deliveries, and failed deliveries queued again (and only those); bad
// input is one line and exit 2, nothing printed holds a secret.
func TestWebhooksCommands(t *testing.T) {
	t.Setenv("TEST_CRM_SECRET", testSecret)
	t.Setenv("TEST_AUDIT_SECRET", "")
	eachAdminDatabase(t, webhooksYAML, testWebhooksCommands)
}

func testWebhooksCommands(t *testing.T, cfgPath string, store *models.Store) {
	ctx := context.Background()
	now := time.Now()
	queueWebhookEvents(t, store, now)
	hooks := func(args ...string) (int, string, string) {
		code, stdout, stderr := runCmd(append([]string{"--config", cfgPath, "webhooks"}, args...)...)
		require.NotContains(t, stdout+stderr, testSecret)
		require.NotContains(t, stdout+stderr, "receiver-token")
		return code, stdout, stderr
	}

	code, stdout, stderr := hooks("list")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 8, stdout)
	require.Regexp(t, `^EVENT\s+TYPE\s+ENDPOINT\s+STATUS\s+ATTEMPTS\s+LAST\s+CREATED$`, lines[0])
	for i, want := range []string{
		`^evt_3\s+user\.deleted\s+gone\s+failed\s+1\s+none\s`,
		`^evt_2\s+session\.created\s+crm\s+pending\s+1\s+503\s`,
		`^evt_1\s+user\.created\s+crm\s+delivered\s+1\s+200\s`,
		`^evt_1\s+user\.created\s+audit\s+failed\s+1\s+500\s`,
		`^evt_0\s+user\.updated\s+crm\s+pending\s+0\s+-\s`,
	} {
		require.Regexp(t, want, lines[i+1])
	}
	require.Equal(t, "5 deliveries", lines[6])
	require.Regexp(t, `^outbox: 2 pending \(the oldest for 4h0m\ds\), 2 failed$`, lines[7])

	// Filters, and a page at a time.
	code, stdout, _ = hooks("list", "--status", "failed", "--endpoint", "gone")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "\n1 delivery\n")
	require.Regexp(t, `\nevt_3 `, stdout)
	var seen []string
	before := ""
	for page := 0; ; page++ {
		args := []string{"list", "--limit", "2"}
		if before != "" {
			args = append(args, "--before", before)
		}
		code, stdout, stderr = hooks(args...)
		require.Equal(t, 0, code, stderr)
		seen = append(seen, regexp.MustCompile(`(?m)^evt_\d\s+\S+\s+\S+`).FindAllString(stdout, -1)...)
		m := regexp.MustCompile(`more: add --before '([^']+)'`).FindStringSubmatch(stdout)
		if m == nil {
			require.Equal(t, 2, page)
			break
		}
		before = m[1]
	}
	require.Len(t, seen, 5)
	code, stdout, stderr = hooks("list", "--json")
	require.Equal(t, 0, code, stderr)
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &listed))
	require.Len(t, listed, 5)
	require.Equal(t, "evt_3", listed[0]["eventId"])
	require.NotContains(t, listed[0], "body", "bodies only in show")
	require.Nil(t, listed[0]["nextAt"], "a failed delivery has no next attempt")
	require.NotNil(t, listed[1]["nextAt"])
	// --json pages too: the next page's --before on standard error, so
	// that standard output stays one JSON array.
	seen, before = nil, ""
	for page := 0; ; page++ {
		args := []string{"list", "--json", "--limit", "2"}
		if before != "" {
			args = append(args, "--before", before)
		}
		code, stdout, stderr = hooks(args...)
		require.Equal(t, 0, code, stderr)
		var rows []map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
		for _, r := range rows {
			seen = append(seen, fmt.Sprint(r["eventId"], " ", r["endpoint"]))
		}
		m := regexp.MustCompile(`more: add --before '([^']+)'`).FindStringSubmatch(stderr)
		if m == nil {
			require.Equal(t, 2, page, "a full page of JSON names the next one: %q", stderr)
			break
		}
		before = m[1]
	}
	require.Len(t, seen, 5)
	require.ElementsMatch(t, []string{"evt_3 gone", "evt_2 crm", "evt_1 crm", "evt_1 audit", "evt_0 crm"}, seen)

	code, stdout, _ = hooks("list", "--help")
	require.Equal(t, 0, code)
	require.Equal(t, "usage: latchkey [--config FILE] webhooks list [--before <cursor>] [--endpoint <endpoint>] [--json] [--limit <N>] [--status <pending|delivered|failed>]\n", stdout)
	for _, args := range [][]string{{"list", "--status", "lost"}, {"list", "--limit", "0"}, {"list", "--before", "nonsense"}, {"show"}, {"retry", "a", "b"}} {
		code, stdout, stderr = hooks(args...)
		require.Equal(t, 2, code, args)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	}

	// show: the body as written, and each endpoint's delivery.
	code, stdout, stderr = hooks("show", "evt_1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "event evt_1 (user.created), created ")
	require.Contains(t, stdout, "\n  \"type\": \"user.created\",\n")
	require.Contains(t, stdout, `"email": "ann@example.com"`)
	require.Regexp(t, `\naudit \(disabled\)\s+failed\s+1\s+500\s+-\s+answered 500\n`, stdout)
	require.Regexp(t, `\ncrm\s+delivered\s+1\s+200\s+delivered \d{4}-\S+Z\s+-\n`, stdout)
	code, stdout, _ = hooks("show", "evt_3")
	require.Equal(t, 0, code)
	require.Regexp(t, `\ngone \(not configured\)\s+failed\s+1\s+none\s+-\s+dial tcp: connection refused\n`, stdout)
	code, stdout, _ = hooks("show", "evt_1", "--json")
	require.Equal(t, 0, code)
	var shown []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &shown))
	require.Len(t, shown, 2)
	require.Equal(t, "user.created", shown[0]["body"].(map[string]any)["type"])
	code, _, stderr = hooks("show", "evt_nope")
	require.Equal(t, 1, code)
	require.Equal(t, "latchkey: webhooks show: no webhook event \"evt_nope\" in the outbox (delivered events are removed after 168h0m0s)\n", stderr)

	// retry: an event's failed deliveries only; one without is refused.
	code, _, stderr = hooks("retry", "evt_2")
	require.Equal(t, 1, code)
	require.Equal(t, "latchkey: webhooks retry: event evt_2 has no failed delivery (crm pending); nothing changed\n", stderr)
	code, stdout, stderr = hooks("retry", "evt_1")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "queued event evt_1 again for 1 endpoint (audit (disabled)): due now, with a fresh retry schedule\n", stdout)
	rows, err := webhookstore.New(store).Show(ctx, "evt_1")
	require.NoError(t, err)
	require.Equal(t, webhookstore.StatusPending, rows[0].Status, "audit")
	require.Zero(t, rows[0].Attempts)
	require.WithinDuration(t, time.Now(), rows[0].NextAt, time.Minute)
	require.Equal(t, webhookstore.StatusDelivered, rows[1].Status, "crm: delivered stays delivered")

	code, stdout, stderr = hooks("retry-failed")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "queued 1 delivery again: due now, with a fresh retry schedule\n", stdout)
	code, stdout, _ = hooks("retry-failed")
	require.Equal(t, 0, code)
	require.Equal(t, "no failed deliveries; nothing changed\n", stdout)
	code, stdout, _ = hooks("list", "--status", "failed")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "\n0 deliveries\noutbox: 4 pending")
}

// queueWebhookEvents writes four events as a change would, an hour apart
// (evt_0 the oldest), and records attempts on them: evt_0 untried, evt_1
// delivered to crm and failed (schedule spent) to audit, evt_2 retrying after a 503, evt_3
// failed to an endpoint since removed.
func queueWebhookEvents(t *testing.T, store *models.Store, now time.Time) {
	ctx := context.Background()
	subscribers := map[string][]string{
		"user.updated": {"crm"}, "user.created": {"crm", "audit"}, "session.created": {"crm"}, "user.deleted": {"gone"},
	}
	outbox := webhookstore.NewOutbox(func(eventType string) []string { return subscribers[eventType] })
	evs := []events.Event{
		{ID: "evt_0", Type: "user.updated", Time: now.Add(-4 * time.Hour), Data: map[string]any{"user": map[string]any{"id": "u1"}, "changes": []string{"name"}}},
		{ID: "evt_1", Type: "user.created", Time: now.Add(-3 * time.Hour), Data: map[string]any{"user": map[string]any{"id": "u1", "email": "ann@example.com"}, "provider": "email"}},
		{ID: "evt_2", Type: "session.created", Time: now.Add(-2 * time.Hour), Data: map[string]any{"user_id": "u1", "session_id": "s1"}},
		{ID: "evt_3", Type: "user.deleted", Time: now.Add(-time.Hour), Data: map[string]any{"user_id": "u1", "actor": "admin"}},
	}
	require.NoError(t, store.DB().Transaction(func(tx *gorm.DB) error { return outbox.Write(tx, evs) }))

	ws := webhookstore.New(store)
	claimed, err := ws.Claim(ctx, "test-worker", now, time.Minute, 10, []string{"crm", "audit", "gone"})
	require.NoError(t, err)
	require.Len(t, claimed, 5)
	for _, d := range claimed {
		switch d.EventID + "/" + d.Endpoint {
		case "evt_0/crm":
		case "evt_1/crm":
			require.NoError(t, ws.Delivered(ctx, d, 200, now))
		case "evt_2/crm":
			require.NoError(t, ws.Retry(ctx, d, 503, "answered 503", now.Add(5*time.Minute)))
		default: // evt_1/audit, evt_3/gone: the schedule spent
			status, errText := 500, "answered 500"
			if d.Endpoint == "gone" {
				status, errText = 0, "dial tcp: connection refused"
			}
			require.NoError(t, ws.Fail(ctx, d, status, errText, now))
		}
	}
}

// check-config refuses webhooks aimed inside the operator's network (the
// issue's http://10.0.0.1/ and the cloud metadata address), listing each
// with the other problems and never printing a secret; a good section is
// summed up in one line.
func TestCheckConfigWebhooks(t *testing.T) {
	clearEnv(t)
	t.Setenv("TEST_CRM_SECRET", testSecret+" not-a-secret-value")
	t.Setenv("TEST_AUDIT_SECRET", testSecret)
	path := writeFile(t, `port: 0
webhooks:
  endpoints:
    - name: crm
      url: http://10.0.0.1/
      secret_env: TEST_CRM_SECRET
    - name: metadata
      url: http://169.254.169.254/latest/meta-data/
      secret_env: TEST_AUDIT_SECRET
    - name: internal
      url: https://10.0.0.1/hook
      secret_env: TEST_AUDIT_SECRET
    - name: imds
      url: https://169.254.169.254/
      secret_env: TEST_AUDIT_SECRET
      events: [user.signedIn]
`)
	code, stdout, stderr := runCmd("--config", path, "check-config")
	require.Equal(t, 1, code)
	require.NotContains(t, stdout, "configuration OK")
	for _, want := range []string{
		"error: port: 0 is not a TCP port\n",
		"error: webhooks.endpoints[0] (crm): url http://10.0.0.1 uses http for a host other than loopback (use https)\n",
		"error: webhooks.endpoints[0] (crm): TEST_CRM_SECRET: secret 2 of 2 does not start with whsec_",
		"error: webhooks.endpoints[1] (metadata): url http://169.254.169.254 uses http for a host other than loopback (use https)\n",
		"error: webhooks.endpoints[2] (internal): url https://10.0.0.1 is a private address, inside a network rather than on the internet: refused unless allow_private: true\n",
		"error: webhooks.endpoints[3] (imds): url https://169.254.169.254 is a link-local address",
		`error: webhooks.endpoints[3] (imds): events: "user.signedIn" is not an event type`,
	} {
		require.Contains(t, stderr, want)
	}
	require.Equal(t, 7, strings.Count(stderr, "error: "), stderr)
	require.NotContains(t, stdout+stderr, testSecret)
	require.NotContains(t, stdout+stderr, "not-a-secret-value")
	require.NotContains(t, stdout+stderr, "meta-data")

	path = writeFile(t, `webhooks:
  endpoints:
    - name: crm
      url: https://crm.example.com/hooks?token=receiver-token
      secret_env: TEST_CRM_SECRET
      events: [user.created, session.created]
    - name: audit
      url: http://localhost:9/audit
      secret_env: TEST_AUDIT_SECRET
    - name: paused
      url: https://10.0.0.1/hook
      secret_env: UNSET_SECRET
      enabled: false
      allow_private: true
`)
	t.Setenv("TEST_CRM_SECRET", testSecret+" "+testSecret)
	code, stdout, stderr = runCmd("--config", path, "check-config")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "\nwebhooks: 2 endpoints on: crm (https://crm.example.com, 2 secrets, 2 event types), audit (http://localhost:9, 1 secret, every event type); disabled: paused; 8 attempts over 27h35m5s, then failed\n")
	require.Contains(t, stdout, "configuration OK")
	require.NotContains(t, stdout+stderr, testSecret)
	require.NotContains(t, stdout+stderr, "receiver-token")
}

// `webhooks test` sends a webhook.test event, signed by every secret of a
// rotation, to a real receiver that verifies it with the Standard
// Webhooks reference library; it needs no database, reaches a disabled
// endpoint too, and says in one line why an endpoint did not accept it.
func TestWebhooksTestSend(t *testing.T) {
	clearEnv(t)
	newer := "whsec_" + base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
	t.Setenv("TEST_RECV_SECRET", newer+" "+testSecret)
	t.Setenv("DATABASE_URL", filepath.Join(t.TempDir(), "never-created.db"))

	type received struct {
		header http.Header
		body   []byte
	}
	got := make(chan received, 1)
	answer := http.StatusNoContent
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		got <- received{req.Header.Clone(), body}
		w.WriteHeader(answer)
	}))
	defer receiver.Close()
	cfgPath := writeFile(t, `webhooks:
  endpoints:
    - name: recv
      url: `+receiver.URL+`/hooks?token=receiver-token
      secret_env: TEST_RECV_SECRET
      events: [user.created]
      enabled: false
`)
	code, stdout, stderr := runCmd("--config", cfgPath, "webhooks", "test", "recv")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^endpoint recv \(http://127\.0\.0\.1:\d+\) accepted webhook\.test (evt_[0-9a-f]+): answered 204 in \S+, signed with 2 secrets; the endpoint is disabled, so no other event goes to it\n$`, stdout)
	id := regexp.MustCompile(`evt_[0-9a-f]+`).FindString(stdout)
	r := <-got
	require.Equal(t, id, r.header.Get("webhook-id"))
	for _, secret := range []string{newer, testSecret} {
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		require.NoError(t, wh.Verify(r.body, r.header), "either secret of the rotation verifies")
	}
	var event struct {
		ID, Type, Timestamp string
		Data                map[string]string
	}
	require.NoError(t, json.Unmarshal(r.body, &event))
	require.Equal(t, id, event.ID)
	require.Equal(t, "webhook.test", event.Type)
	require.Equal(t, map[string]string{"endpoint": "recv"}, event.Data)
	require.NoFileExists(t, os.Getenv("DATABASE_URL"), "no database opened")

	answer = http.StatusInternalServerError
	code, stdout, stderr = runCmd("--config", cfgPath, "webhooks", "test", "recv")
	<-got
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Regexp(t, `^latchkey: webhooks test: endpoint recv \(http://127\.0\.0\.1:\d+\) did not accept webhook\.test evt_[0-9a-f]+ \(after \S+\): webhook\.test: endpoint did not answer 2xx \(500\)\n$`, stderr)

	code, _, stderr = runCmd("--config", cfgPath, "webhooks", "test", "nosuch")
	require.Equal(t, 2, code)
	require.Equal(t, "latchkey: webhooks test: no webhook endpoint \"nosuch\" in the configuration (endpoints: recv)\n", stderr)
	for _, out := range []string{stdout, stderr} {
		require.NotContains(t, out, "receiver-token")
		require.NotContains(t, out, testSecret)
	}
}
