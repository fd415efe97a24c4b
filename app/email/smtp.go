package email

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	mail "github.com/wneessen/go-mail"
)

// Message is one rendered e-mail.
type Message struct {
	From    string
	To      string
	Subject string
	Text    string
	HTML    string
}

// Sender delivers a message. SMTP is the real one; handlers depend on this
// interface so a test can count or fail deliveries.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// DefaultTimeout bounds one delivery (connect, TLS, AUTH and DATA), so a
// dead mail server cannot hold a sign-in request for long.
const DefaultTimeout = 15 * time.Second

// SMTPOptions are the knobs the server URL does not carry.
type SMTPOptions struct {
	// Timeout bounds one delivery; zero means DefaultTimeout.
	Timeout time.Duration
	// TLSConfig replaces the default (system roots, server name from the
	// URL), e.g. to trust a private CA.
	TLSConfig *tls.Config
	// Logger receives one line per delivery; nil means slog.Default().
	Logger *slog.Logger
	// Dial, when set, opens the TCP connection instead of a net.Dialer.
	// Tests use it to reach a loopback server under a non-loopback host
	// name, so that every decision still rests on the configured name.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// SMTP delivers through one server with a fresh connection per message:
// sign-in mail is rare, and a pool would mostly hold connections the server
// has already timed out.
type SMTP struct {
	srv     Server
	timeout time.Duration
	tls     *tls.Config
	log     *slog.Logger
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// NewSMTP prepares delivery through the server URL (see ParseServer).
// Errors never contain the user name or password.
func NewSMTP(server string, opts SMTPOptions) (*SMTP, error) {
	srv, err := ParseServer(server)
	if err != nil {
		return nil, err
	}
	s := &SMTP{srv: srv, timeout: opts.Timeout, tls: opts.TLSConfig, log: opts.Logger, dial: opts.Dial}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

// Addr is host:port, for logs.
func (s *SMTP) Addr() string { return s.srv.Addr() }

// Send delivers m as multipart/alternative (text, then HTML). A delivery is
// logged with the server and recipient; a failure is returned for the
// caller to log once. Neither ever includes the body (it holds the sign-in
// link) nor the credentials.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.message(m)
	if err != nil {
		return err
	}
	client, err := mail.NewClient(s.srv.Host, s.clientOptions()...)
	if err != nil {
		return fmt.Errorf("smtp client for %s: %w", s.Addr(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	start := time.Now()
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("e-mail not delivered to %s via %s after %v: %w",
			m.To, s.Addr(), time.Since(start).Round(time.Millisecond), err)
	}
	s.log.Info("sign-in e-mail delivered", "server", s.Addr(), "to", m.To,
		"duration", time.Since(start).Round(time.Millisecond))
	return nil
}

func (s *SMTP) message(m Message) (*mail.Msg, error) {
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := msg.From(m.From); err != nil {
		return nil, fmt.Errorf("from address %q: %w", m.From, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("recipient %q: %w", m.To, err)
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(mail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)
	return msg, nil
}

// clientOptions: STARTTLS when offered (opportunistic; a certificate that
// does not verify is still an error), implicit TLS for smtps. With
// credentials, the strongest mechanism the server offers; go-mail's PLAIN
// and LOGIN refuse to send a password over an unencrypted connection except
// to localhost, as net/smtp does.
func (s *SMTP) clientOptions() []mail.Option {
	opts := []mail.Option{
		mail.WithPort(s.srv.Port),
		mail.WithTimeout(s.timeout),
		mail.WithTLSPolicy(mail.TLSOpportunistic),
	}
	if s.srv.Implicit {
		opts = append(opts, mail.WithSSL())
	}
	if s.tls != nil {
		opts = append(opts, mail.WithTLSConfig(s.tls))
	}
	if s.dial != nil {
		opts = append(opts, mail.WithDialContextFunc(s.dialContext))
	}
	if s.srv.User != "" {
		opts = append(opts,
			mail.WithOpportunisticSMTPAuth(
				mail.SMTPAuthSCRAMSHA256PLUS, mail.SMTPAuthSCRAMSHA256,
				mail.SMTPAuthSCRAMSHA1PLUS, mail.SMTPAuthSCRAMSHA1,
				mail.SMTPAuthCramMD5, mail.SMTPAuthPlain, mail.SMTPAuthLogin),
			mail.WithUsername(s.srv.User),
			mail.WithPassword(s.srv.Pass))
	}
	return opts
}

// dialContext wraps SMTPOptions.Dial. go-mail skips its own implicit TLS
// when given a dial function, so for smtps:// the handshake happens here,
// with the same configuration go-mail would use.
func (s *SMTP) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := s.dial(ctx, network, addr)
	if err != nil || !s.srv.Implicit {
		return conn, err
	}
	cfg := &tls.Config{ServerName: s.srv.Host, MinVersion: mail.DefaultTLSMinVersion}
	if s.tls != nil {
		cfg = s.tls
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return tc, nil
}
