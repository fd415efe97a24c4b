package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
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
	host     string
	port     int
	implicit bool // smtps://: TLS from the first byte
	user     string
	pass     string
	timeout  time.Duration
	tls      *tls.Config
	log      *slog.Logger
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
}

// NewSMTP reads a server URL as nodemailer does:
// smtp://[user:pass@]host[:port] (default port 587, STARTTLS whenever the
// server offers it) or smtps://... (implicit TLS, default port 465).
// Credentials are percent-decoded. Errors never contain the password.
func NewSMTP(server string, opts SMTPOptions) (*SMTP, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, errors.New("smtp server: not a URL") // the parse error would echo the password
	}
	s := &SMTP{host: u.Hostname(), timeout: opts.Timeout, tls: opts.TLSConfig, log: opts.Logger, dial: opts.Dial}
	switch u.Scheme {
	case "smtp":
		s.port = mail.DefaultPortTLS
	case "smtps":
		s.port, s.implicit = mail.DefaultPortSSL, true
	default:
		return nil, fmt.Errorf("smtp server %s: scheme must be smtp or smtps", u.Redacted())
	}
	if s.host == "" {
		return nil, fmt.Errorf("smtp server %s: no host", u.Redacted())
	}
	if p := u.Port(); p != "" {
		if s.port, err = strconv.Atoi(p); err != nil || s.port < 1 || s.port > 65535 {
			return nil, fmt.Errorf("smtp server %s: bad port", u.Redacted())
		}
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

// Addr is host:port, for logs.
func (s *SMTP) Addr() string { return s.host + ":" + strconv.Itoa(s.port) }

// Send delivers m as multipart/alternative (text, then HTML). A delivery is
// logged with the server and recipient; a failure is returned for the
// caller to log once. Neither ever includes the body (it holds the sign-in
// link) nor the credentials.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.message(m)
	if err != nil {
		return err
	}
	client, err := mail.NewClient(s.host, s.clientOptions()...)
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
		mail.WithPort(s.port),
		mail.WithTimeout(s.timeout),
		mail.WithTLSPolicy(mail.TLSOpportunistic),
	}
	if s.implicit {
		opts = append(opts, mail.WithSSL())
	}
	if s.tls != nil {
		opts = append(opts, mail.WithTLSConfig(s.tls))
	}
	if s.dial != nil {
		opts = append(opts, mail.WithDialContextFunc(s.dialContext))
	}
	if s.user != "" {
		opts = append(opts,
			mail.WithOpportunisticSMTPAuth(
				mail.SMTPAuthSCRAMSHA256PLUS, mail.SMTPAuthSCRAMSHA256,
				mail.SMTPAuthSCRAMSHA1PLUS, mail.SMTPAuthSCRAMSHA1,
				mail.SMTPAuthCramMD5, mail.SMTPAuthPlain, mail.SMTPAuthLogin),
			mail.WithUsername(s.user),
			mail.WithPassword(s.pass))
	}
	return opts
}

// dialContext wraps SMTPOptions.Dial. go-mail skips its own implicit TLS
// when given a dial function, so for smtps:// the handshake happens here,
// with the same configuration go-mail would use.
func (s *SMTP) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := s.dial(ctx, network, addr)
	if err != nil || !s.implicit {
		return conn, err
	}
	cfg := &tls.Config{ServerName: s.host, MinVersion: mail.DefaultTLSMinVersion}
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
