// Package smtptest runs a real SMTP server (github.com/emersion/go-smtp) on a
// loopback port for tests, and parses what it receives with net/mail and
// mime/multipart, as a mail client would. Only tests import it.
package smtptest

import (
	"crypto/tls"
	"errors"
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
	// RejectRcpt answers RCPT TO with 550 for the addresses it returns true for.
	RejectRcpt func(addr string) bool
}

// Mail is one accepted message.
type Mail struct {
	From string
	To   []string
	Data []byte
	TLS  bool // delivered over an encrypted connection
	Auth string
}

// Server is a running test SMTP server; Start stops it with the test.
type Server struct {
	Addr string // 127.0.0.1:port
	opts Options

	mu     sync.Mutex
	mails  []Mail
	notify chan struct{}
}

// Start listens on a free loopback port until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	if opts.Implicit {
		l = tls.NewListener(l, opts.TLS)
	}
	s := &Server{Addr: l.Addr().String(), opts: opts, notify: make(chan struct{}, 1)}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &session{srv: s, mail: Mail{TLS: isTLS}, conn: c}, nil
	}))
	srv.Domain = "smtptest.localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = nopLogger{}
	if !opts.Implicit {
		srv.TLSConfig = opts.TLS
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// URL is the server as a latchkey `server:` value: scheme smtp or smtps,
// userinfo "" or "user:pass" (already escaped).
func (s *Server) URL(scheme, userinfo string) string {
	if userinfo != "" {
		userinfo += "@"
	}
	return scheme + "://" + userinfo + s.Addr
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
	if ss.srv.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != ss.srv.opts.Username || pass != ss.srv.opts.Password {
			return errors.New("invalid credentials")
		}
		ss.authed, ss.mail.Auth = true, user
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.srv.opts.Username != "" && !ss.authed {
		return smtp.ErrAuthRequired
	}
	_, ss.mail.TLS = ss.conn.TLSConnectionState()
	ss.mail.From = from
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
