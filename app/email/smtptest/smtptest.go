// Package smtptest runs a real SMTP server (github.com/emersion/go-smtp) on a
// loopback port for tests, and parses what it receives with net/mail and
// mime/multipart, as a mail client would. Tests import it, and so does
// the scale bench (test/bench/scalebench), through Listen.
package smtptest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options shape the server.
type Options struct {
	// TLS, when set, is offered with STARTTLS (or from the first byte with Implicit).
	TLS      *tls.Config
	Implicit bool
	// Username and Password, when set, make AUTH PLAIN mandatory.
	Username, Password string
	// CRAMMD5 also offers AUTH CRAM-MD5, ahead of PLAIN, as many relays do:
	// a client may pick it over a plain-text connection because the
	// password itself is not sent, yet an on-path attacker can still crack
	// the digest offline.
	CRAMMD5 bool
	// RejectRcpt answers RCPT TO with 550 for the addresses it returns true for.
	RejectRcpt func(addr string) bool
	// OnMail, when set, is handed every accepted message instead of the
	// server keeping it (Mails stays empty): a bench receiving thousands
	// of messages neither grows without bound nor scans them all.
	OnMail func(Mail)
	// SlowReplies holds back the i-th reply on each connection (0 is the
	// greeting) for SlowReplies[i]: a relay slow to answer, each command
	// within a client's per-command timeout yet the whole delivery not.
	// Only replies sent before any TLS count.
	SlowReplies []time.Duration
}

// Mail is one accepted message.
type Mail struct {
	From string
	To   []string
	Data []byte
	TLS  bool // delivered over an encrypted connection
	Auth string
	Helo string // the name the client gave in EHLO (or HELO)
}

// Server is a running test SMTP server; Start stops it with the test.
type Server struct {
	Addr string // 127.0.0.1:port
	opts Options
	srv  *smtp.Server

	mu     sync.Mutex
	mails  []Mail
	auths  []bool // one per AUTH command: was the connection encrypted
	notify chan struct{}
}

// RemoteHost is a name that is not loopback and that no resolver knows:
// a client reaches the server under it only through Dial, so a test can
// check what a client does towards a remote relay. SelfSigned certifies it.
const RemoteHost = "relay.smtptest.test"

// Start listens on a free loopback port until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Listen(opts)
	if err != nil {
		t.Fatalf("smtptest: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Listen listens on a free loopback port until Close, for a caller
// outside a test (the scale bench).
func Listen(opts Options) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if len(opts.SlowReplies) > 0 {
		l = slowListener{Listener: l, delays: opts.SlowReplies}
	}
	if opts.Implicit {
		l = tls.NewListener(l, opts.TLS)
	}
	s := &Server{Addr: l.Addr().String(), opts: opts, notify: make(chan struct{}, 1)}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &session{srv: s, mail: Mail{TLS: isTLS}, conn: c}, nil
	}))
	s.srv.Domain = "smtptest.localhost"
	s.srv.AllowInsecureAuth = true
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	s.srv.ErrorLog = nopLogger{}
	if !opts.Implicit {
		s.srv.TLSConfig = opts.TLS
	}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Close stops the server and its connections.
func (s *Server) Close() error { return s.srv.Close() }

// URL is the server as a latchkey `server:` value: scheme smtp or smtps,
// userinfo "" or "user:pass" (already escaped).
func (s *Server) URL(scheme, userinfo string) string {
	if userinfo != "" {
		userinfo += "@"
	}
	return scheme + "://" + userinfo + s.Addr
}

// Dial connects to the server whatever address is asked for: give it to
// the client as its dial function to reach the server under RemoteHost.
func (s *Server) Dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, s.Addr)
}

// AuthAttempts reports, for every AUTH command received so far, whether
// it came over an encrypted connection.
func (s *Server) AuthAttempts() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.auths...)
}

// Mails returns the messages received so far.
func (s *Server) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// Wait returns once n messages have arrived, failing the test after 10 s.
func (s *Server) Wait(t testing.TB, n int) []Mail {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if m := s.Mails(); len(m) >= n {
			return m
		}
		select {
		case <-s.notify:
		case <-deadline:
			t.Fatalf("smtptest: %d message(s) after 10s, want %d", len(s.Mails()), n)
		}
	}
}

func (s *Server) add(m Mail) {
	if s.opts.OnMail != nil {
		s.opts.OnMail(m)
		return
	}
	s.mu.Lock()
	s.mails = append(s.mails, m)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

type session struct {
	srv    *Server
	conn   *smtp.Conn
	mail   Mail
	authed bool
}

func (ss *session) AuthMechanisms() []string {
	switch {
	case ss.srv.opts.Username == "":
		return nil
	case ss.srv.opts.CRAMMD5:
		return []string{cramMD5, sasl.Plain}
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	_, isTLS := ss.conn.TLSConnectionState()
	ss.srv.mu.Lock()
	ss.srv.auths = append(ss.srv.auths, isTLS)
	ss.srv.mu.Unlock()
	check := func(user, pass string) error {
		if user != ss.srv.opts.Username || pass != ss.srv.opts.Password {
			return errors.New("invalid credentials")
		}
		ss.authed, ss.mail.Auth = true, user
		return nil
	}
	if mech == cramMD5 && ss.srv.opts.CRAMMD5 {
		return &cramMD5Server{user: ss.srv.opts.Username, pass: ss.srv.opts.Password, ok: check}, nil
	}
	return sasl.NewPlainServer(func(_, user, pass string) error { return check(user, pass) }), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.srv.opts.Username != "" && !ss.authed {
		return smtp.ErrAuthRequired
	}
	_, ss.mail.TLS = ss.conn.TLSConnectionState()
	ss.mail.From, ss.mail.Helo = from, ss.conn.Hostname()
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if f := ss.srv.opts.RejectRcpt; f != nil && f(to) {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	ss.mail.To = append(ss.mail.To, strings.ToLower(to))
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := ss.mail
	m.Data = b
	ss.srv.add(m)
	return nil
}

func (ss *session) Reset() {
	ss.mail = Mail{TLS: ss.mail.TLS, Auth: ss.mail.Auth}
}

func (ss *session) Logout() error { return nil }

type nopLogger struct{}

func (nopLogger) Printf(string, ...interface{}) {}
func (nopLogger) Println(...interface{})        {}
