package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/webhooks"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// `latchkey webhooks list|show|retry|retry-failed|test`: the operator's
// view of the webhook outbox (docs/webhooks.md) and the two ways to send
// again what a receiver missed, read and written directly in the store as
// the other admin commands do. Nothing printed holds a secret: bodies
// hold none by design, and an endpoint's URL is shown as scheme and host
// only (its path or query may carry the receiver's own token).

// webhookFlags are `webhooks list`'s filters and page.
type webhookFlags struct {
	status, endpoint, before string
	limit                    int
}

func (f *webhookFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.status, "status", "", "only deliveries in this `pending|delivered|failed` status")
	fs.StringVar(&f.endpoint, "endpoint", "", "only deliveries to this `endpoint`")
	fs.IntVar(&f.limit, "limit", webhookstore.DefaultLimit, fmt.Sprintf("`N` deliveries per page (at most %d)", webhookstore.MaxLimit))
	fs.StringVar(&f.before, "before", "", "the page after this `cursor` (printed under a full page)")
}

// webhookStatuses are the rows' statuses, in the order usage lists them.
var webhookStatuses = []string{webhookstore.StatusPending, webhookstore.StatusDelivered, webhookstore.StatusFailed}

// checkWebhooksList refuses a bad filter before the database is opened.
func checkWebhooksList(r *adminRun) error {
	f := r.webhooks
	if f.status != "" && !slices.Contains(webhookStatuses, f.status) {
		return fmt.Errorf("--status %q: one of %s", f.status, strings.Join(webhookStatuses, ", "))
	}
	if f.limit < 1 || f.limit > webhookstore.MaxLimit {
		return fmt.Errorf("--limit %d: between 1 and %d", f.limit, webhookstore.MaxLimit)
	}
	if _, err := webhookstore.ParseCursor(f.before); err != nil {
		return fmt.Errorf("--before: %w", err)
	}
	return nil
}

// outbox is the webhook outbox's queries (its own room of the store).
func (r *adminRun) outbox() *webhookstore.Store { return webhookstore.New(r.store) }

// deliveryJSON is a delivery as --json prints it: the row without its
// lease, which only the workers use.
type deliveryJSON struct {
	EventID     string          `json:"eventId"`
	Endpoint    string          `json:"endpoint"`
	Type        string          `json:"type"`
	Status      string          `json:"status"`
	Attempts    int             `json:"attempts"`
	NextAt      *time.Time      `json:"nextAt"` // pending only
	LastStatus  int             `json:"lastStatus"`
	LastError   string          `json:"lastError"`
	CreatedAt   time.Time       `json:"createdAt"`
	DeliveredAt *time.Time      `json:"deliveredAt"`
	Body        json.RawMessage `json:"body,omitempty"` // show only
}

func toJSON(d webhookstore.Delivery, withBody bool) deliveryJSON {
	out := deliveryJSON{EventID: d.EventID, Endpoint: d.Endpoint, Type: d.Type, Status: d.Status, Attempts: d.Attempts,
		LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: d.CreatedAt.UTC(), DeliveredAt: utcOrNil(d.DeliveredAt)}
	if d.Status == webhookstore.StatusPending {
		next := d.NextAt.UTC()
		out.NextAt = &next
	}
	if withBody && json.Valid(d.Body) {
		out.Body = d.Body
	}
	return out
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// webhooksList prints a page of deliveries, newest first, and the
// outbox's backlog.
func webhooksList(r *adminRun) error {
	f := r.webhooks
	before, _ := webhookstore.ParseCursor(f.before) // checked by checkWebhooksList
	rows, err := r.outbox().List(r.ctx, webhookstore.Filter{Status: f.status, Endpoint: f.endpoint, Limit: f.limit, Before: before})
	if err != nil {
		return err
	}
	if r.json {
		out := make([]deliveryJSON, len(rows))
		for i, d := range rows {
			out[i] = toJSON(d, false)
		}
		if err := r.printJSON(out); err != nil {
			return err
		}
		// On standard error, so that standard output stays one array.
		r.morePage(r.errw, rows, f.limit)
		return nil
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "EVENT\tTYPE\tENDPOINT\tSTATUS\tATTEMPTS\tLAST\tCREATED")
	for _, d := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.EventID, d.Type, d.Endpoint, d.Status, d.Attempts, lastAnswer(d), stamp(d.CreatedAt))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(r.out, deliveries(int64(len(rows))))
	r.morePage(r.out, rows, f.limit)
	st, err := r.outbox().Stats(r.ctx, r.now)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("outbox: %d pending", st.Pending)
	if !st.OldestPending.IsZero() {
		line += fmt.Sprintf(" (the oldest for %s)", r.now.Sub(st.OldestPending).Round(time.Second))
	}
	fmt.Fprintf(r.out, "%s, %d failed\n", line, st.Failed)
	return nil
}

// lastAnswer is the last attempt's HTTP status: "-" before any attempt,
// "none" when the receiver did not answer (refused, timed out).
func lastAnswer(d webhookstore.Delivery) string {
	switch {
	case d.Attempts == 0:
		return "-"
	case d.LastStatus == 0:
		return "none"
	}
	return fmt.Sprint(d.LastStatus)
}

// webhooksShow prints an event: its body, then each endpoint's delivery.
func webhooksShow(r *adminRun) error {
	rows, err := r.showEvent(r.args[0])
	if err != nil {
		return err
	}
	if r.json {
		out := make([]deliveryJSON, len(rows))
		for i, d := range rows {
			out[i] = toJSON(d, i == 0)
		}
		return r.printJSON(out)
	}
	fmt.Fprintf(r.out, "event %s (%s), created %s\n", rows[0].EventID, rows[0].Type, stamp(rows[0].CreatedAt))
	var body bytes.Buffer
	if json.Indent(&body, rows[0].Body, "", "  ") != nil {
		body.Reset()
		body.Write(rows[0].Body)
	}
	fmt.Fprintf(r.out, "%s\n", body.Bytes())
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ENDPOINT\tSTATUS\tATTEMPTS\tLAST\tWHEN\tERROR")
	for _, d := range rows {
		when := "-"
		switch {
		case d.Status == webhookstore.StatusPending:
			when = "next " + stamp(d.NextAt)
		case d.DeliveredAt != nil:
			when = "delivered " + stamp(*d.DeliveredAt)
		}
		errText := d.LastError
		if errText == "" {
			errText = "-"
		}
		fmt.Fprintf(w, "%s%s\t%s\t%d\t%s\t%s\t%s\n", d.Endpoint, r.endpointNote(d.Endpoint), d.Status, d.Attempts, lastAnswer(d), when, oneLine(errText))
	}
	return w.Flush()
}

// showEvent is the event's rows; an id the outbox does not hold is an
// error saying why that may be.
func (r *adminRun) showEvent(id string) ([]webhookstore.Delivery, error) {
	rows, err := r.outbox().Show(r.ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, fmt.Errorf("no webhook event %q in the outbox (delivered events are removed after %s)", id, webhookstore.DeliveredRetention)
	}
	return rows, err
}

// endpointNote marks an endpoint this configuration no longer sends to.
func (r *adminRun) endpointNote(name string) string {
	e, ok := r.cfg.Webhooks.Endpoint(name)
	switch {
	case !ok:
		return " (not configured)"
	case !e.On():
		return " (disabled)"
	}
	return ""
}

// webhooksRetry queues an event's failed deliveries again, due now with a
// fresh retry schedule; the receivers get the same webhook-id.
func webhooksRetry(r *adminRun) error {
	rows, err := r.showEvent(r.args[0])
	if err != nil {
		return err
	}
	var failed, others []string
	for _, d := range rows {
		if d.Status == webhookstore.StatusFailed {
			failed = append(failed, d.Endpoint+r.endpointNote(d.Endpoint))
		} else {
			others = append(others, d.Endpoint+" "+d.Status)
		}
	}
	if len(failed) == 0 {
		return fmt.Errorf("event %s has no failed delivery (%s); nothing changed", r.args[0], strings.Join(others, ", "))
	}
	n, err := r.outbox().RetryEvent(r.ctx, r.args[0], r.now)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "queued event %s again for %s (%s): due now, with a fresh retry schedule\n",
		r.args[0], plural(n, "endpoint"), strings.Join(failed, ", "))
	return nil
}

// webhooksRetryFailed queues every failed delivery again: after a
// receiver's outage outlasted the retry schedule.
func webhooksRetryFailed(r *adminRun) error {
	n, err := r.outbox().RetryFailed(r.ctx, r.now)
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(r.out, "no failed deliveries; nothing changed")
		return nil
	}
	fmt.Fprintf(r.out, "queued %s again: due now, with a fresh retry schedule\n", deliveries(n))
	return nil
}

// deliveries is "1 delivery", "2 deliveries".
func deliveries(n int64) string {
	if n == 1 {
		return "1 delivery"
	}
	return fmt.Sprintf("%d deliveries", n)
}

// WebhooksSummary is check-config's line about the webhook endpoints:
// each enabled one's host, how many secrets sign (two during a rotation)
// and how many event types, then the disabled ones and the time the retry
// schedule spans. No secret, and no URL path (it may hold a token).
func WebhooksSummary(w config.Webhooks) string {
	var on, off []string
	for _, e := range w.Endpoints {
		if !e.On() {
			off = append(off, e.Name)
			continue
		}
		events := "every event type"
		if len(e.Events) > 0 {
			events = plural(int64(len(e.Events)), "event type")
		}
		on = append(on, fmt.Sprintf("%s (%s, %s, %s)", e.Name, endpointHost(e.URL), plural(int64(len(e.Secrets)), "secret"), events))
	}
	var total time.Duration
	for _, d := range w.Schedule() {
		total += d
	}
	line := "webhooks: " + plural(int64(len(on)), "endpoint") + " on"
	if len(on) > 0 {
		line += ": " + strings.Join(on, ", ")
	}
	if len(off) > 0 {
		line += "; disabled: " + strings.Join(off, ", ")
	}
	return fmt.Sprintf("%s; %d attempts over %s, then failed", line, len(w.RetrySchedule)+1, total)
}

// webhooksTest sends a webhook.test event to the endpoint now, outside
// the outbox and whether or not the endpoint is enabled: the operator's
// check that URL, network path and secret work before (or after)
// switching it on. It needs no database.
func webhooksTest(r *adminRun) error {
	name := r.args[0]
	e, ok := r.cfg.Webhooks.Endpoint(name)
	if !ok {
		names := make([]string, 0, len(r.cfg.Webhooks.Endpoints))
		for _, e := range r.cfg.Webhooks.Endpoints {
			names = append(names, e.Name)
		}
		if len(names) == 0 {
			names = []string{"none configured"}
		}
		return badInput{fmt.Errorf("no webhook endpoint %q in the configuration (endpoints: %s)", name, strings.Join(names, ", "))}
	}
	where := fmt.Sprintf("endpoint %s (%s)", e.Name, endpointHost(e.URL))
	if len(e.Secrets) == 0 {
		return fmt.Errorf("%s: %s (or %s_FILE) is unset or empty: nothing to sign with", where, e.SecretEnv, e.SecretEnv)
	}
	sender := webhooks.NewSender(webhooks.SenderConfig{Timeout: r.cfg.Webhooks.Timeout.D()})
	started := time.Now()
	// The sender bounds the attempt by webhooks.timeout, which may be
	// longer than the admin commands' minute.
	id, status, err := sender.TestSend(context.WithoutCancel(r.ctx), webhooks.Endpoint{
		Name: e.Name, URL: e.URL, Secrets: e.Secrets, Events: e.Events, AllowPrivate: e.AllowPrivate,
	})
	took := time.Since(started).Round(time.Millisecond)
	if err != nil {
		return fmt.Errorf("%s did not accept %s %s (after %s): %w", where, webhooks.TestEventType, id, took, err)
	}
	note := ""
	if !e.On() {
		note = "; the endpoint is disabled, so no other event goes to it"
	}
	fmt.Fprintf(r.out, "%s accepted %s %s: answered %d in %s, signed with %s%s\n",
		where, webhooks.TestEventType, id, status, took, plural(int64(len(e.Secrets)), "secret"), note)
	return nil
}

// endpointHost is an endpoint URL as the commands show it: scheme and
// host, not the path or query, which may carry the receiver's own token.
func endpointHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "an unreadable URL"
	}
	return u.Scheme + "://" + u.Host
}

// morePage says, under a full page, which --before shows the next.
func (r *adminRun) morePage(w io.Writer, rows []webhookstore.Delivery, limit int) {
	if len(rows) == limit {
		fmt.Fprintf(w, "more: add --before '%s'\n", rows[len(rows)-1].Cursor())
	}
}
