package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// DefaultTimeout bounds one attempt: connect, send, answer.
const DefaultTimeout = 10 * time.Second

// ErrStatus is an answer other than 2xx: the attempt failed.
var ErrStatus = errors.New("endpoint did not answer 2xx")

// Sender makes signed requests to endpoints through the SSRF-safe clients.
type Sender struct {
	timeout time.Duration
	clients clients
	now     func() time.Time
}

// SenderConfig configures a Sender; zero values are the defaults.
type SenderConfig struct {
	Timeout time.Duration // DefaultTimeout when zero
	// Resolve looks host names up (default: the system's resolver); the
	// dial checks the addresses it returns.
	Resolve Resolver
	Now     func() time.Time
}

// NewSender builds a Sender.
func NewSender(c SenderConfig) *Sender {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Resolve == nil {
		c.Resolve = defaultResolver
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Sender{timeout: c.Timeout, clients: newClients(c.Resolve, c.Timeout), now: c.Now}
}

// Close closes the clients' idle connections (at shutdown).
func (s *Sender) Close() {
	for _, c := range []*http.Client{s.clients.strict, s.clients.loopback, s.clients.private} {
		c.CloseIdleConnections()
	}
}

// Timeout is the limit of one attempt (the worker's lease is longer).
func (s *Sender) Timeout() time.Duration { return s.timeout }

// Send POSTs body to the endpoint, signed with all its secrets, and
// returns the answer's status (0 when there was none). err is nil only
// for a 2xx answer; otherwise it says why (ErrStatus, the time-out, a
// refused address) without the URL, the body or a secret, so it can be
// logged and stored.
func (s *Sender) Send(ctx context.Context, ep Endpoint, id, eventType string, body []byte) (int, error) {
	u, err := url.Parse(ep.URL)
	if err != nil {
		return 0, fmt.Errorf("endpoint %s: bad URL", ep.Name)
	}
	at := s.now()
	sig, err := Signature(ep.Secrets, id, at, body)
	if err != nil {
		return 0, fmt.Errorf("endpoint %s: %w", ep.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("endpoint %s: bad URL", ep.Name)
	}
	setHeaders(req.Header, id, sig, at)
	resp, err := s.clients.forEndpoint(u.Hostname(), ep.AllowPrivate).Do(req)
	if err != nil {
		return 0, s.cause(ctx, eventType, err)
	}
	// Drain a little of the answer so the connection can be reused; the
	// answer itself is the receiver's business, never logged.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("%s: %w (%d)", eventType, ErrStatus, resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// cause is a failed request's reason without the URL: url.Error quotes it,
// and a URL may carry a token in its path or query.
func (s *Sender) cause(ctx context.Context, eventType string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %s: %w", eventType, s.timeout, context.DeadlineExceeded)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s: %w", eventType, err)
}

// TestEventType is the type of TestSend's event, never queued by a change.
const TestEventType = "webhook.test"

// TestSend sends a webhook.test event ({"endpoint": name}) to ep now,
// outside the outbox: the operator's check that URL, network and secret
// work. It returns the event's id and the answer's status.
func (s *Sender) TestSend(ctx context.Context, ep Endpoint) (id string, status int, err error) {
	id = "evt_" + random.Hex(16)
	body, err := webhookstore.Body(id, TestEventType, s.now(), map[string]string{"endpoint": ep.Name})
	if err != nil {
		return id, 0, err
	}
	status, err = s.Send(ctx, ep, id, TestEventType, body)
	return id, status, err
}
