package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"
	"golang.org/x/net/idna"

	"github.com/latchkey-auth/latchkey/app/random"
)

// Message is one rendered e-mail.
type Message struct {
	// Kind names the mail in log lines ("sign-in", "password reset"):
	// the subject may hold a user's words, the body holds the link.
	Kind    string
	From    string
	To      string
	Subject string
	Text    string
	HTML    string
}

// what is how log lines and errors name m: "password reset e-mail".
func (m Message) what() string {
	if m.Kind == "" {
		return "e-mail"
	}
	return m.Kind + " e-mail"
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
	// TLSConfig replaces the default (system roots), e.g. to trust a
	// private CA; an empty ServerName means the host name of the URL.
	TLSConfig *tls.Config
	// Logger receives one line per delivery; nil means slog.Default().
	Logger *slog.Logger
	// Dial, when set, opens the TCP connection instead of a net.Dialer.
	// Tests use it to reach a loopback server under a non-loopback host
	// name, so that every decision still rests on the configured name.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Hello is the EHLO/HELO name when the server URL has no ?name=:
	// latchkey gives HelloName(SERVICE_URL's host); empty means localhost.
	Hello string
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
	hello   string
}

// NewSMTP prepares delivery through the server URL (see ParseServer):
// STARTTLS is required unless the host is loopback or the URL says
// ?insecure=true, and AUTH is never sent in plain text to a host that is
// not loopback (see tlsPolicy). Errors never contain the user name or
// password.
func NewSMTP(server string, opts SMTPOptions) (*SMTP, error) {
	srv, err := ParseServer(server)
	if err != nil {
		return nil, err
	}
	s := &SMTP{srv: srv, timeout: opts.Timeout, tls: opts.TLSConfig, log: opts.Logger, dial: opts.Dial, hello: srv.Name}
	if s.hello == "" {
		s.hello = opts.Hello
	}
	if s.hello == "" {
		s.hello = "localhost"
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
func (s *SMTP) Addr() string { return s.srv.Addr() }

// Send delivers m as multipart/alternative (text, then HTML). A delivery is
// logged with its kind, the server and the masked recipient; a failure is
// returned for the caller to log once. Neither ever includes the body (it
// holds the link) nor the credentials.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.message(m)
	if err != nil {
		return err
	}
	// conn is the connection go-mail dials: it leaves it open when a step
	// fails (a relay without STARTTLS, a refused AUTH) or QUIT goes
	// unanswered, so Send closes it.
	var conn net.Conn
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := s.dialContext(ctx, network, addr)
		conn = c
		return c, err
	}
	client, err := mail.NewClient(s.srv.Host, s.clientOptions(dial)...)
	if err != nil {
		return fmt.Errorf("smtp client for %s: %w", s.Addr(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	start := time.Now()
	err = deliver(ctx, client, msg)
	if conn != nil {
		_ = conn.Close()
	}
	if err != nil {
		return fmt.Errorf("%s not delivered to %s via %s after %v: %w",
			m.what(), Mask(m.To), s.Addr(), time.Since(start).Round(time.Millisecond), masked(s.explain(err), m.To))
	}
	s.log.Info(m.what()+" delivered", "server", s.Addr(), "to", Mask(m.To),
		"duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// deliver sends msg over one connection. Once the relay has accepted it
// (250 after DATA) it is delivered, whatever QUIT then does: go-mail's
// DialAndSend would report a QUIT unanswered in time as a failure, for
// which the caller deletes the link the user is about to receive.
func deliver(ctx context.Context, client *mail.Client, msg *mail.Msg) error {
	c, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return fmt.Errorf("dial failed: %w", err)
	}
	if err := client.SendWithSMTPClient(c, msg); err != nil {
		return fmt.Errorf("send failed: %w", err)
	}
	_ = client.CloseWithSMTPClient(c)
	return nil
}

func (s *SMTP) message(m Message) (*mail.Msg, error) {
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := msg.From(m.From); err != nil {
		return nil, fmt.Errorf("from address %q: %w", m.From, err)
	}
	msg.SetMessageIDWithValue(messageID(msg))
	// RFC 3834: every mail latchkey sends is machine-made, so vacation
	// responders and other auto-repliers leave it unanswered (their
	// replies would go to a no-reply address or bounce). Exchange and
	// Outlook ignore Auto-Submitted and read X-Auto-Response-Suppress
	// ([MS-OXCMAIL] 2.2.3.2.14) instead: All suppresses out-of-office
	// replies, read and delivery receipts and other automatic answers.
	msg.SetGenHeader("Auto-Submitted", "auto-generated")
	msg.SetGenHeader("X-Auto-Response-Suppress", "All")
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("recipient %q: %w", Mask(m.To), masked(err, m.To))
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(mail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)
	return msg, nil
}

// messageID is a random Message-ID under the From address's domain (in
// its ASCII form). go-mail's own takes this machine's host name, which in
// a container is its id and elsewhere often an internal name: every
// recipient would see it, and a right-hand side that is no domain of the
// sender's looks like spam to some filters.
func messageID(msg *mail.Msg) string {
	domain := "localhost"
	if from := msg.GetFrom(); len(from) == 1 {
		if _, d, ok := strings.Cut(from[0].Address, "@"); ok {
			if ascii, err := idna.Lookup.ToASCII(d); err == nil && ascii != "" {
				domain = ascii
			}
		}
	}
	return random.Hex(16) + "@" + domain
}

// clientOptions: the EHLO name of the URL or SMTPOptions.Hello (never
// this machine's host name, go-mail's default); implicit TLS for smtps, the STARTTLS policy of tlsPolicy
// for smtp (a certificate that does not verify is always an error). With
// credentials, the strongest mechanism the server offers. No RSET after
// the message: the connection carries one and closes, and go-mail counts
// a relay's refusing RSET (some do not implement it) as a failed delivery
// of a message it has already accepted.
func (s *SMTP) clientOptions(dial mail.DialContextFunc) []mail.Option {
	opts := []mail.Option{
		mail.WithPort(s.srv.Port),
		mail.WithTimeout(s.timeout),
		mail.WithTLSPolicy(s.tlsPolicy()),
		mail.WithoutRset(),
		mail.WithDialContextFunc(dial),
		mail.WithHELO(s.hello),
	}
	if s.srv.Implicit {
		opts = append(opts, mail.WithSSL())
	}
	if c := s.tlsConfig(); c != nil {
		opts = append(opts, mail.WithTLSConfig(c))
	}
	if s.srv.User != "" {
		// go-mail sends PLAIN and LOGIN without TLS only to localhost,
		// 127.0.0.1 and ::1; their -NOENC variants, for loopback hosts
		// alone, let every name Loopback accepts do so too, as documented.
		plain, login := mail.SMTPAuthPlain, mail.SMTPAuthLogin
		if s.srv.Loopback() {
			plain, login = mail.SMTPAuthPlainNoEnc, mail.SMTPAuthLoginNoEnc
		}
		opts = append(opts,
			mail.WithOpportunisticSMTPAuth(
				mail.SMTPAuthSCRAMSHA256PLUS, mail.SMTPAuthSCRAMSHA256,
				mail.SMTPAuthSCRAMSHA1PLUS, mail.SMTPAuthSCRAMSHA1,
				mail.SMTPAuthCramMD5, plain, login),
			mail.WithUsername(s.srv.User),
			mail.WithPassword(s.srv.Pass))
	}
	return opts
}

// tlsPolicy: an on-path attacker can strip STARTTLS from the server's
// greeting, so towards a host that is not loopback it is mandatory, and
// go-mail stops before MAIL FROM (and before AUTH) when it is missing.
// insecure=true relaxes that to opportunistic, but only without
// credentials: every AUTH mechanism, CRAM-MD5 and SCRAM included, hands an
// eavesdropper the password or something to crack offline.
func (s *SMTP) tlsPolicy() mail.TLSPolicy {
	if s.srv.Loopback() || (s.srv.Insecure && s.srv.User == "") {
		return mail.TLSOpportunistic
	}
	return mail.TLSMandatory
}

// tlsConfig is SMTPOptions.TLSConfig with the host name of the URL as
// ServerName when it sets none, or nil for go-mail's default (system roots,
// the host name of the URL).
func (s *SMTP) tlsConfig() *tls.Config {
	if s.tls == nil || s.tls.ServerName != "" {
		return s.tls
	}
	c := s.tls.Clone()
	c.ServerName = s.srv.Host
	return c
}

// maskedError is an error whose text names the recipient masked: go-mail
// quotes a refused recipient in full ("affected recipient(s): <addr>"),
// and an address must not reach a log line. It unwraps to the original.
type maskedError struct {
	text string
	err  error
}

func (e *maskedError) Error() string { return e.text }
func (e *maskedError) Unwrap() error { return e.err }

// masked is err with every occurrence of the address to masked in its text.
func masked(err error, to string) error {
	text := err.Error()
	if to == "" || !strings.Contains(text, to) {
		return err
	}
	return &maskedError{text: strings.ReplaceAll(text, to, Mask(to)), err: err}
}

// explain turns go-mail's refusal of a server without STARTTLS into what
// to do about it; any other error is returned as is. go-mail has no
// sentinel for it, so the text is matched (TestSMTPRequiresStartTLSToARemoteRelay
// notices if it changes).
func (s *SMTP) explain(err error) error {
	if !strings.Contains(err.Error(), "does not support STARTTLS") {
		return err
	}
	if s.srv.Insecure {
		return errors.New("the server offers no STARTTLS, and the SMTP user name and password are never sent " +
			"unencrypted to a host that is not loopback, not even with insecure=true: use smtps://, " +
			"enable STARTTLS on the relay, or remove the credentials from the server URL")
	}
	return errors.New("the server offers no STARTTLS, and mail to a host that is not loopback goes only over TLS: " +
		"use smtps://, enable STARTTLS on the relay, or (plain text, readable by anyone on the network path, " +
		"and only without credentials) add ?insecure=true to the server URL")
}

// dialContext opens the connection (SMTPOptions.Dial, or a net.Dialer)
// under a deadline that no later SetDeadline can move past ctx's: go-mail
// sets its timeout afresh after the greeting and before MAIL FROM, so a
// relay answering each step just in time would otherwise hold a request
// for several times the delivery's timeout. go-mail skips its own
// implicit TLS when given a dial function, so for smtps:// the handshake
// happens here, over the bounded connection, with the configuration
// go-mail would use.
func (s *SMTP) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := s.dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if end, ok := ctx.Deadline(); ok {
		conn = &boundedConn{Conn: conn, end: end}
		if err := conn.SetDeadline(end); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	if !s.srv.Implicit {
		return conn, nil
	}
	cfg := s.tlsConfig()
	if cfg == nil {
		cfg = &tls.Config{ServerName: s.srv.Host, MinVersion: mail.DefaultTLSMinVersion}
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return tc, nil
}

// boundedConn is a connection whose deadlines never lie past end (see
// dialContext). A TLS connection over it, STARTTLS's included, sets its
// deadlines through it.
type boundedConn struct {
	net.Conn
	end time.Time
}

func (c *boundedConn) bound(t time.Time) time.Time {
	if t.IsZero() || t.After(c.end) {
		return c.end
	}
	return t
}

func (c *boundedConn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.bound(t)) }
func (c *boundedConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.bound(t)) }
func (c *boundedConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.bound(t)) }
