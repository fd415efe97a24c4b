// Package connlimit caps the connections a server has open at once, so
// that no number of clients can use up the process's file descriptors.
// As golang.org/x/net/netutil's LimitListener, a connection past the cap
// waits for a slot; unlike it, a connection idle between requests (a
// kept-alive one, http.StateIdle) gives its slot up to one that waits, the
// longest-idle first. Otherwise a client that opened as many connections
// as the cap and left them idle, a few requests a second, kept everyone
// else waiting for the idle timeout. nginx frees its idle keep-alive
// connections alike when it runs short.
package connlimit

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Listener is a listener with a cap; set its ConnState as the
// http.Server's, which is how it learns which connections are idle.
type Listener struct {
	net.Listener
	slots chan struct{} // one element per open connection
	idled chan struct{} // a connection became idle (buffered: one note)
	done  chan struct{}
	stop  sync.Once

	mu   sync.Mutex
	idle map[*conn]time.Time // idle connections, since when
}

// New caps l at n open connections (n >= 1).
func New(l net.Listener, n int) *Listener {
	return &Listener{
		Listener: l, slots: make(chan struct{}, n), idled: make(chan struct{}, 1),
		done: make(chan struct{}), idle: map[*conn]time.Time{},
	}
}

// Accept takes the next connection from the kernel's queue and then a slot
// for it: a free one; else an idle connection's, which is closed; else it
// waits until a slot comes free or a connection becomes idle. Only one
// goroutine calls Accept (the server's loop).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.slots <- struct{}{}:
			return &conn{Conn: c, l: l}, nil
		default:
		}
		if l.closeIdlest() {
			continue // its Close freed its slot
		}
		select {
		case l.slots <- struct{}{}:
			return &conn{Conn: c, l: l}, nil
		case <-l.idled:
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// Close stops Accept, including one waiting for a slot.
func (l *Listener) Close() error {
	l.stop.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// ConnState is the http.Server's ConnState hook: it notes which
// connections are idle. A connection the listener did not make (none,
// here) is ignored.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state != http.StateIdle {
		delete(l.idle, c)
		return
	}
	l.idle[c] = time.Now()
	select {
	case l.idled <- struct{}{}:
	default:
	}
}

// closeIdlest closes the connection idle the longest, if any.
func (l *Listener) closeIdlest() bool {
	l.mu.Lock()
	var oldest *conn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	_ = oldest.Close()
	return true
}

// conn gives its slot back when closed, once.
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.idle, c)
		c.l.mu.Unlock()
		<-c.l.slots
	})
	return err
}
