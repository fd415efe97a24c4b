package app_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// serveApp runs cfg's app through Serve on a real loopback listener, as main
// does, until the test ends; it returns the base URL the listener answers.
func serveApp(t *testing.T, cfg config.Config) string {
	t.Helper()
	_, err := cfg.Validate(app.CatalogueExtra)
	require.NoError(t, err)
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
		_ = a.Close()
	})
	return "http://" + l.Addr().String() + a.Base().Path
}

// served dials addr and has one request answered on the connection, which
// stays open (keep-alive) and so holds one of the listener's slots.
func served(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c := dialGet(t, addr, path)
	requireAnswer(t, c)
	return c
}

func sendGet(t *testing.T, c net.Conn, path string) {
	t.Helper()
	require.NoError(t, c.SetWriteDeadline(time.Now().Add(10*time.Second)))
	_, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: latchkey.test\r\n\r\n")
	require.NoError(t, err)
}

// requireAnswer reads one whole response from c within a generous time.
func requireAnswer(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// requireNoAnswerYet: nothing arrives on c for a moment. (A slow server
// passes this vacuously; it never fails a correct one.)
func requireNoAnswerYet(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	n, err := c.Read(make([]byte, 1))
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "the connection was answered (%d bytes, err %v)", n, err)
}

func listenerAddr(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	return u.Host
}

// With server.max_connections = N, N connections in the middle of a
// request hold every slot: the next one is accepted by the kernel but not
// served until one of them is free.
func TestMaxConnections(t *testing.T) {
	cfg := testConfig(t)
	cfg.Server = config.Server{MaxConnections: 2, IdleTimeout: config.Duration(time.Minute)}
	base := serveApp(t, cfg)
	addr, path := listenerAddr(t, base), csrfPath(base)

	first, _ := busy(t, addr, path)
	busy(t, addr, path)

	extra := dialGet(t, addr, path)
	requireNoAnswerYet(t, extra)

	require.NoError(t, first.Close())
	requireAnswer(t, extra)
}

// busy dials addr and sends the start of a request (no blank line yet):
// the server is reading it, and the connection holds a slot. finish sends
// the rest.
func busy(t *testing.T, addr, path string) (c net.Conn, finish func()) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: latchkey.test\r\n")
	require.NoError(t, err)
	return c, func() {
		_, err := io.WriteString(c, "\r\n")
		require.NoError(t, err)
	}
}

// Connections idle between requests keep no one out: at
// server.max_connections a new connection is served at once, and the
// longest-idle kept-alive one is closed for it (its client opens another
// when it next needs one, as after idle_timeout; nginx frees its
// keep-alive connections alike). A connection whose request ends while
// another waits gives its slot up too. Kept-alive connections held their
// slots for idle_timeout (75 s), so a client that opened max_connections
// of them and left them idle, a few requests a second, kept everyone else
// waiting.
func TestIdleConnectionsYieldTheirSlot(t *testing.T) {
	cfg := testConfig(t)
	cfg.Server = config.Server{MaxConnections: 2, IdleTimeout: config.Duration(time.Minute)}
	base := serveApp(t, cfg)
	addr, path := listenerAddr(t, base), csrfPath(base)

	oldest := served(t, addr, path)
	time.Sleep(20 * time.Millisecond)
	newer := served(t, addr, path)

	extra := dialGet(t, addr, path)
	requireAnswer(t, extra)
	requireClosed(t, oldest)
	sendGet(t, newer, path)
	requireAnswer(t, newer)

	// Both slots busy, a third waits; the one whose request ends and
	// goes idle yields its slot to it.
	require.NoError(t, extra.Close())
	require.NoError(t, newer.Close())
	held, finish := busy(t, addr, path)
	busy(t, addr, path)
	waiting := dialGet(t, addr, path)
	requireNoAnswerYet(t, waiting)
	finish()
	requireAnswer(t, held)
	requireAnswer(t, waiting)
}

// dialGet dials addr and sends a GET of path, not waiting for the answer.
func dialGet(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sendGet(t, c, path)
	return c
}

// requireClosed: the server has closed c.
func requireClosed(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the server closed the connection")
}

// A keep-alive connection is closed after server.idle_timeout without a
// request, below the cap too (where no waiting connection takes its slot).
func TestIdleConnectionsAreClosed(t *testing.T) {
	cfg := testConfig(t)
	cfg.Server = config.Server{MaxConnections: 2, IdleTimeout: config.Duration(200 * time.Millisecond)}
	base := serveApp(t, cfg)
	addr, path := listenerAddr(t, base), csrfPath(base)

	idle := served(t, addr, path)
	requireClosed(t, idle)
}

// csrfPath is the path of GET /csrf below base.
func csrfPath(base string) string {
	u, _ := url.Parse(base)
	return u.Path + "/csrf"
}
