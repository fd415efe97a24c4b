package smtptest

import (
	"net"
	"time"
)

// slowListener hands out connections that hold back their first replies
// (Options.SlowReplies).
type slowListener struct {
	net.Listener
	delays []time.Duration
}

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &slowConn{Conn: c, delays: l.delays}, nil
}

// slowConn waits before writing the last line of each of its first
// replies ("250 ok", not "250-PIPELINING"): the server writes a reply's
// lines one by one, and the client waits for the last.
type slowConn struct {
	net.Conn
	delays  []time.Duration
	replies int
}

func (c *slowConn) Write(p []byte) (int, error) {
	if len(p) >= 4 && p[3] == ' ' {
		if c.replies < len(c.delays) {
			time.Sleep(c.delays[c.replies])
		}
		c.replies++
	}
	return c.Conn.Write(p)
}
