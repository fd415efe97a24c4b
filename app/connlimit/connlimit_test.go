package connlimit

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pipeListener hands out the server ends of net.Pipe pairs.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
}

func (p *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}
func (p *pipeListener) Close() error   { close(p.done); return nil }
func (p *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

// dial queues one connection and returns its client end.
func (p *pipeListener) dial() net.Conn {
	server, client := net.Pipe()
	p.conns <- server
	return client
}

func accepted(t *testing.T, l *Listener) <-chan net.Conn {
	t.Helper()
	out := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			out <- c
		}
		close(out)
	}()
	return out
}

// At the cap a waiting connection takes the slot of the longest-idle
// one, which is closed; with none idle it waits until one goes idle or
// closes; Close ends a waiting Accept.
func TestListener(t *testing.T) {
	p := &pipeListener{conns: make(chan net.Conn, 8), done: make(chan struct{})}
	l := New(p, 2)
	p.dial()
	p.dial()
	a, _ := l.Accept()
	b, _ := l.Accept()

	l.ConnState(a, http.StateIdle)
	time.Sleep(time.Millisecond)
	l.ConnState(b, http.StateIdle)
	p.dial()
	c := <-accepted(t, l)
	require.NotNil(t, c)
	_, err := a.Write([]byte("x"))
	require.ErrorIs(t, err, io.ErrClosedPipe, "the longest-idle connection was closed for it")

	// b and c busy: the next waits until one goes idle.
	l.ConnState(b, http.StateActive)
	l.ConnState(c, http.StateActive)
	p.dial()
	next := accepted(t, l)
	select {
	case <-next:
		t.Fatal("served past the cap with no connection idle")
	case <-time.After(50 * time.Millisecond):
	}
	l.ConnState(c, http.StateIdle)
	require.NotNil(t, <-next)
	_, err = c.Write([]byte("x"))
	require.ErrorIs(t, err, io.ErrClosedPipe)

	// None idle, none closing: Close ends the wait.
	p.dial()
	last := accepted(t, l)
	require.NoError(t, l.Close())
	require.Nil(t, <-last)
}
