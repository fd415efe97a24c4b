package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSendIsVerifiedByTheReceiver(t *testing.T) {
	sec := newSecret(t)
	rc := newReceiver(t, sec)
	s := NewSender(SenderConfig{})
	body := []byte(`{"id":"evt_1","type":"user.created","timestamp":"2031-05-06T07:08:09.123Z","data":{}}`)
	status, err := s.Send(t.Context(), rc.endpoint("crm", sec), "evt_1", "user.created", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	rc.requireAllVerified()
	got := rc.requests()
	require.Len(t, got, 1)
	require.Equal(t, "evt_1", got[0].ID)
	require.Equal(t, body, got[0].Body)
}

// Secret rotation: both secrets sign, so receivers holding the old one and
// receivers holding the new one both accept.
func TestSendDuringRotation(t *testing.T) {
	oldSec, newSec := newSecret(t), newSecret(t)
	s := NewSender(SenderConfig{})
	for _, rc := range []*receiver{newReceiver(t, oldSec), newReceiver(t, newSec), newReceiver(t, oldSec, newSec)} {
		status, err := s.Send(t.Context(), rc.endpoint("crm", newSec, oldSec), "evt_1", "user.created", []byte(`{}`))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
		rc.requireAllVerified()
	}
	// A receiver with a third secret refuses: the signature is not forged
	// by the rotation.
	rc := newReceiver(t, newSecret(t))
	status, err := s.Send(t.Context(), rc.endpoint("crm", newSec, oldSec), "evt_1", "user.created", []byte(`{}`))
	require.ErrorIs(t, err, ErrStatus)
	require.Equal(t, http.StatusUnauthorized, status)
}

func TestSendFailures(t *testing.T) {
	sec := newSecret(t)
	rc := newReceiver(t, sec)
	s := NewSender(SenderConfig{Timeout: 200 * time.Millisecond})

	rc.answer = func(received) int { return http.StatusInternalServerError }
	status, err := s.Send(t.Context(), rc.endpoint("crm", sec), "evt_1", "user.created", []byte(`{}`))
	require.ErrorIs(t, err, ErrStatus)
	require.Equal(t, 500, status)

	rc.answer = func(received) int { time.Sleep(time.Second); return http.StatusOK }
	start := time.Now()
	status, err = s.Send(t.Context(), rc.endpoint("crm", sec), "evt_1", "user.created", []byte(`{}`))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Zero(t, status)
	require.Less(t, time.Since(start), 900*time.Millisecond)
	require.NotContains(t, err.Error(), "url-secret", "the URL (and a token in it) stays out of errors")
}

// A 3xx is the receiver's answer, a failure: the client does not follow it
// (it could lead anywhere, e.g. to a metadata service).
func TestSendDoesNotFollowRedirects(t *testing.T) {
	hit := make(chan struct{}, 1)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit <- struct{}{} }))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	sec := newSecret(t)
	status, err := NewSender(SenderConfig{}).Send(t.Context(), Endpoint{Name: "r", URL: redirect.URL, Secrets: []string{sec}}, "evt_1", "t", []byte(`{}`))
	require.ErrorIs(t, err, ErrStatus)
	require.Equal(t, http.StatusTemporaryRedirect, status)
	require.Empty(t, hit)
}

func TestTestSend(t *testing.T) {
	sec := newSecret(t)
	rc := newReceiver(t, sec)
	s := NewSender(SenderConfig{})
	t.Cleanup(s.Close)
	id, status, err := s.TestSend(t.Context(), rc.endpoint("crm", sec))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.True(t, strings.HasPrefix(id, "evt_"))
	rc.requireAllVerified()
	got := rc.requests()
	require.Len(t, got, 1)
	require.Equal(t, id, got[0].ID)
	var body map[string]any
	require.NoError(t, json.Unmarshal(got[0].Body, &body))
	require.Equal(t, id, body["id"])
	require.Equal(t, "webhook.test", body["type"])
	require.Equal(t, map[string]any{"endpoint": "crm"}, body["data"])
}

func TestCheckIP(t *testing.T) {
	for _, c := range []struct {
		ip                string
		loopback, private bool
		ok                bool
	}{
		{"93.184.216.34", false, false, true},
		{"2606:2800:220:1:248:1893:25c8:1946", false, false, true},
		{"10.0.0.1", false, false, false},
		{"10.0.0.1", true, false, false},
		{"10.0.0.1", false, true, true},
		{"172.16.5.4", false, false, false},
		{"192.168.1.1", false, false, false},
		{"100.64.0.1", false, false, false},
		{"fd00::1", false, false, false},
		{"169.254.169.254", false, false, false},
		{"169.254.169.254", true, false, false},
		{"169.254.169.254", false, true, true},
		{"fe80::1", false, false, false},
		{"::ffff:10.0.0.1", false, false, false},
		{"::ffff:169.254.169.254", false, false, false},
		{"64:ff9b::a00:1", false, false, false},
		{"64:ff9b::a9fe:a9fe", false, false, false},
		{"64:ff9b::5db8:d822", false, false, true},
		{"2002:a00:1::1", false, false, false},
		{"2002:a00:1::1", false, true, true},
		{"127.0.0.1", false, false, false},
		{"127.0.0.1", true, false, true},
		{"127.0.0.1", false, true, true},
		{"::1", false, false, false},
		{"::1", true, false, true},
		{"0.0.0.0", false, true, false},
		{"0.1.2.3", false, true, false},
		{"::", false, true, false},
		{"224.0.0.1", false, true, false},
		{"255.255.255.255", false, true, false},
		{"ff02::1", false, true, false},
	} {
		err := CheckIP(netip.MustParseAddr(c.ip), c.loopback, c.private)
		if c.ok {
			require.NoError(t, err, "%+v", c)
		} else {
			require.ErrorIs(t, err, ErrRefusedAddress, "%+v", c)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "127.0.0.1": true, "127.9.8.7": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "localhost.example.com": false, "example.com": false, "10.0.0.1": false, "0.0.0.0": false,
	} {
		require.Equal(t, want, IsLoopbackHost(host), host)
	}
}

// fixedResolver answers every name with ip, as a DNS record pointing a
// public-looking name at an internal address would.
func fixedResolver(ip string) Resolver {
	return func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}
}

// The client refuses the operator's network at the dial, whatever the URL
// says: private and metadata addresses, and loopback reached through a
// name that is not literally loopback. Literal loopback, and anything with
// AllowPrivate, goes through.
func TestSendRefusesInternalAddresses(t *testing.T) {
	sec := newSecret(t)
	rc := newReceiver(t, sec)
	port := rc.srv.URL[strings.LastIndex(rc.srv.URL, ":"):]
	s := NewSender(SenderConfig{Timeout: 2 * time.Second, Resolve: fixedResolver("127.0.0.1")})

	for _, u := range []string{
		"http://10.0.0.1/hook",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00::1]/hook",
		"http://[::ffff:10.0.0.1]/hook",
		"http://0.0.0.0" + port + "/hook",
		"http://hooks.example.com" + port + "/hook", // resolves to 127.0.0.1
	} {
		status, err := s.Send(t.Context(), Endpoint{Name: "x", URL: u, Secrets: []string{sec}}, "evt_1", "t", []byte(`{}`))
		require.ErrorIs(t, err, ErrRefusedAddress, u)
		require.Zero(t, status)
	}
	require.Empty(t, rc.requests(), "nothing reached the loopback receiver")

	for _, ep := range []Endpoint{
		{Name: "literal", URL: "http://127.0.0.1" + port + "/hook", Secrets: []string{sec}},
		{Name: "localhost", URL: "http://localhost" + port + "/hook", Secrets: []string{sec}},
		{Name: "allowed", URL: "http://hooks.example.com" + port + "/hook", Secrets: []string{sec}, AllowPrivate: true},
	} {
		local := NewSender(SenderConfig{Timeout: 2 * time.Second, Resolve: fixedResolver("127.0.0.1")})
		_, err := local.Send(t.Context(), ep, "evt_1", "t", []byte(`{}`))
		require.NoError(t, err, ep.Name)
	}
	rc.requireAllVerified()
	require.Len(t, rc.requests(), 3)
}

func TestNewSet(t *testing.T) {
	sec := newSecret(t)
	set, err := NewSet([]Endpoint{
		{Name: "all", URL: "https://a.example/h", Secrets: []string{sec}},
		{Name: "some", URL: "https://b.example/h", Secrets: []string{sec}, Events: []string{"user.created"}},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"all", "some"}, set.Subscribers("user.created"))
	require.Equal(t, []string{"all"}, set.Subscribers("session.created"))
	_, ok := set.Get("some")
	require.True(t, ok)
	_, ok = set.Get("gone")
	require.False(t, ok)
	require.Len(t, set.All(), 2)

	_, err = NewSet([]Endpoint{
		{Name: "a", URL: "https://a.example/h", Secrets: []string{sec}},
		{Name: "a", URL: "https://a.example/h", Secrets: []string{sec}},
		{Name: "b", URL: "ftp://a.example/h", Secrets: []string{sec}},
		{Name: "c", URL: "https://a.example/h"},
		{Name: "d", URL: "https://a.example/h", Secrets: []string{"whsec_!!"}},
		{URL: "https://a.example/h", Secrets: []string{sec}},
	})
	require.Error(t, err)
	for _, want := range []string{`"a": name used twice`, `"b": URL`, `"c": no secret`, `"d": secret 1`, "without a name"} {
		require.Contains(t, err.Error(), want)
	}
	require.False(t, errors.Is(err, ErrStatus))
}
