// Package webhooks delivers account events to the operator's endpoints as
// signed HTTP requests (Standard Webhooks): the endpoint set, the signing,
// the retry schedule, an HTTP client that cannot be pointed into the
// operator's own network, and the worker that drains the outbox
// (models/webhookstore) in the background. It has no HTTP routes: changes
// write events in their own transactions and never wait for a delivery.
package webhooks

import (
	"errors"
	"fmt"
	"net/url"
	"slices"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Endpoint is one receiver of events.
type Endpoint struct {
	Name string
	URL  string
	// Secrets are whsec_ secrets; every one signs each request, so during
	// a rotation (new one first) the receiver accepts with either.
	Secrets []string
	// Events are the types sent; empty: all.
	Events []string
	// AllowPrivate lets the URL reach private, link-local and loopback
	// addresses: an operator's explicit choice, off by default.
	AllowPrivate bool
}

// Wants reports whether the endpoint subscribes to eventType.
func (e Endpoint) Wants(eventType string) bool {
	return len(e.Events) == 0 || slices.Contains(e.Events, eventType)
}

// Set is the configured, enabled endpoints, by name.
type Set struct {
	list   []Endpoint
	byName map[string]Endpoint
}

// NewSet checks the endpoints the worker and the outbox will use: names
// unique and set, URLs http(s) with a host, at least one decodable secret
// each. The config's validation (app/config) says the same to the operator
// with every other problem; this is the core refusing to start without it.
func NewSet(endpoints []Endpoint) (*Set, error) {
	s := &Set{byName: map[string]Endpoint{}}
	var errs []error
	for _, e := range endpoints {
		if err := check(e); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := s.byName[e.Name]; dup {
			errs = append(errs, fmt.Errorf("webhook endpoint %q: name used twice", e.Name))
			continue
		}
		s.byName[e.Name] = e
		s.list = append(s.list, e)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func check(e Endpoint) error {
	if e.Name == "" {
		return errors.New("webhook endpoint without a name")
	}
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("webhook endpoint %q: URL must be http(s)://host/…", e.Name)
	}
	if len(e.Secrets) == 0 {
		return fmt.Errorf("webhook endpoint %q: no secret", e.Name)
	}
	for i, sec := range e.Secrets {
		if _, err := standardwebhooks.NewWebhook(sec); err != nil {
			return fmt.Errorf("webhook endpoint %q: secret %d is not whsec_ and base64", e.Name, i+1)
		}
	}
	return nil
}

// Get finds an endpoint by name; false when it is not configured (any
// more): the worker does not claim its deliveries (Names), and a row
// claimed as the config changed fails.
func (s *Set) Get(name string) (Endpoint, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Names are the endpoints' names, in configured order: the deliveries
// this instance's worker claims.
func (s *Set) Names() []string {
	out := make([]string, len(s.list))
	for i, e := range s.list {
		out[i] = e.Name
	}
	return out
}

// All is the endpoints in configured order.
func (s *Set) All() []Endpoint { return slices.Clone(s.list) }

// Subscribers names the endpoints that want eventType: what
// webhookstore.NewOutbox needs to queue an event.
func (s *Set) Subscribers(eventType string) []string {
	var out []string
	for _, e := range s.list {
		if e.Wants(eventType) {
			out = append(out, e.Name)
		}
	}
	return out
}
