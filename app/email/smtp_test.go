package email_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

const secretPass = "p:ss@w0rd/%"

var testMessage = email.Message{
	Kind:    "sign-in",
	From:    "Sign in <no-reply@example.com>",
	To:      "alice@example.com",
	Subject: "Sign in to example.com",
	Text:    "Sign in to example.com\nhttps://example.com/api/auth/callback/email?callbackUrl=https%3A%2F%2Fexample.com&token=abc&email=alice%40example.com\n\n",
	HTML:    `<a href="https://example.com/api/auth/callback/email?callbackUrl=https%3A%2F%2Fexample.com&amp;token=abc&amp;email=alice%40example.com">Sign in</a>`,
}

func newSender(t *testing.T, server string, opts email.SMTPOptions) (*email.SMTP, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s, err := email.NewSMTP(server, opts)
	if err != nil {
		t.Fatalf("NewSMTP: %v", err)
	}
	return s, &logs
}

func TestSMTPDeliversMultipartAlternative(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	s, logs := newSender(t, srv.URL("smtp", ""), email.SMTPOptions{})
	if err := s.Send(context.Background(), testMessage); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := srv.Wait(t, 1)[0]
	if m.From != "no-reply@example.com" || len(m.To) != 1 || m.To[0] != "alice@example.com" {
		t.Fatalf("envelope from %q to %v", m.From, m.To)
	}
	p, err := smtptest.Parse(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if p.ContentType != "multipart/alternative" || p.Subject != testMessage.Subject {
		t.Fatalf("content type %q subject %q", p.ContentType, p.Subject)
	}
	if text := strings.ReplaceAll(p.Text, "\r\n", "\n"); text != testMessage.Text || !strings.Contains(p.HTML, "&amp;token=abc") {
		t.Fatalf("parts:\ntext %q\nhtml %q", p.Text, p.HTML)
	}
	if p.Header.Get("Message-Id") == "" || p.Header.Get("Date") == "" {
		t.Fatalf("missing Message-Id or Date: %v", p.Header)
	}
	// RFC 3834: vacation responders and other auto-repliers do not
	// answer the no-reply sender.
	if got := p.Header["Auto-Submitted"]; len(got) != 1 || got[0] != "auto-generated" {
		t.Fatalf("Auto-Submitted %q, want one auto-generated", got)
	}
	// Exchange and Outlook ignore Auto-Submitted: their out-of-office
	// and other automatic replies look at this header instead.
	if got := p.Header["X-Auto-Response-Suppress"]; len(got) != 1 || got[0] != "All" {
		t.Fatalf("X-Auto-Response-Suppress %q, want one All", got)
	}
	// The id's domain is the From address's, not this machine's name
	// (in a container, its id): nothing internal reaches the recipients.
	if id := p.Header.Get("Message-Id"); !regexp.MustCompile(`^<[0-9a-f]{32}@example\.com>$`).MatchString(id) {
		t.Fatalf("Message-Id %q", id)
	}
	if strings.Contains(logs.String(), "token=abc") || !strings.Contains(logs.String(), "delivered") {
		t.Fatalf("log: %s", logs)
	}
}

// STARTTLS is used when the server offers it, and credentials from the URL
// (percent-encoded) are sent only over the encrypted connection.
func TestSMTPStartTLSAndAuth(t *testing.T) {
	serverTLS, clientTLS := smtptest.SelfSigned(t)
	srv := smtptest.Start(t, smtptest.Options{TLS: serverTLS, Username: "mailer@example.com", Password: secretPass})
	userinfo := "mailer%40example.com:" + strings.NewReplacer(":", "%3A", "@", "%40", "/", "%2F", "%", "%25").Replace(secretPass)
	s, logs := newSender(t, srv.URL("smtp", userinfo), email.SMTPOptions{TLSConfig: clientTLS})
	if err := s.Send(context.Background(), testMessage); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := srv.Wait(t, 1)[0]
	if !m.TLS || m.Auth != "mailer@example.com" {
		t.Fatalf("delivered with TLS=%v auth=%q", m.TLS, m.Auth)
	}
	if strings.Contains(logs.String(), secretPass) {
		t.Fatalf("password in the log: %s", logs)
	}
}

func TestSMTPImplicitTLS(t *testing.T) {
	serverTLS, clientTLS := smtptest.SelfSigned(t)
	srv := smtptest.Start(t, smtptest.Options{TLS: serverTLS, Implicit: true, Username: "mailer", Password: "s3cr3t"})
	s, _ := newSender(t, srv.URL("smtps", "mailer:s3cr3t"), email.SMTPOptions{TLSConfig: clientTLS})
	if err := s.Send(context.Background(), testMessage); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if m := srv.Wait(t, 1)[0]; !m.TLS || m.Auth != "mailer" {
		t.Fatalf("smtps delivery: TLS=%v auth=%q", m.TLS, m.Auth)
	}
}

// A certificate that does not verify is an error, not a silent fallback to
// plain text: "opportunistic" means "when offered", not "whatever happens".
func TestSMTPStartTLSBadCertificate(t *testing.T) {
	serverTLS, _ := smtptest.SelfSigned(t)
	srv := smtptest.Start(t, smtptest.Options{TLS: serverTLS})
	s, _ := newSender(t, srv.URL("smtp", ""), email.SMTPOptions{})
	if err := s.Send(context.Background(), testMessage); err == nil {
		t.Fatal("delivered over STARTTLS with an untrusted certificate")
	}
	if n := len(srv.Mails()); n != 0 {
		t.Fatalf("%d messages received", n)
	}
}

func TestSMTPFailures(t *testing.T) {
	refused := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		return addr
	}()
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never greets
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	rejecting := smtptest.Start(t, smtptest.Options{RejectRcpt: func(string) bool { return true }})
	authing := smtptest.Start(t, smtptest.Options{Username: "u", Password: "right"})

	for _, tc := range []struct{ name, server string }{
		{"connection refused", "smtp://u:" + "wrong%2Fpass" + "@" + refused},
		{"no greeting (timeout)", "smtp://" + silent.Addr().String()},
		{"recipient rejected", rejecting.URL("smtp", "")},
		{"wrong password", authing.URL("smtp", "u:wrong%2Fpass")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, logs := newSender(t, tc.server, email.SMTPOptions{Timeout: 500 * time.Millisecond})
			start := time.Now()
			err := s.Send(context.Background(), testMessage)
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("Send took %v despite a 500ms timeout", time.Since(start))
			}
			for _, out := range []string{err.Error(), logs.String()} {
				if strings.Contains(out, "wrong/pass") || strings.Contains(out, "wrong%2Fpass") || strings.Contains(out, "token=abc") {
					t.Fatalf("secret leaked: %s", out)
				}
				// The SMTP library quotes the refused recipient in its own
				// error; only the masked address may reach a log line.
				if strings.Contains(out, testMessage.To) {
					t.Fatalf("the recipient's full address leaked: %s", out)
				}
			}
			if !strings.Contains(err.Error(), "not delivered to a***@example.com") {
				t.Fatalf("error does not say what failed: %v", err)
			}
		})
	}
}

func TestNewSMTPRejectsBadURLsWithoutEchoingThePassword(t *testing.T) {
	for _, server := range []string{
		"http://u:hunter2@example.com",
		"smtp://u:hunter2@:25",
		"smtp://u:hunter2@example.com:0",
		"smtp://u:hunter2@example.com:99999",
		"smtp://u:hunter2@exa mple.com\x7f",
	} {
		_, err := email.NewSMTP(server, email.SMTPOptions{})
		if err == nil {
			t.Errorf("NewSMTP(%q) accepted", server)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("NewSMTP(%q) error shows the password: %v", server, err)
		}
	}
	for server, want := range map[string]string{
		"smtp://mail.example.com":        "mail.example.com:587",
		"smtps://mail.example.com":       "mail.example.com:465",
		"smtp://mail.example.com:2525":   "mail.example.com:2525",
		"smtps://u:p@mail.example.com:1": "mail.example.com:1",
	} {
		s, err := email.NewSMTP(server, email.SMTPOptions{})
		if err != nil || s.Addr() != want {
			t.Errorf("NewSMTP(%q): addr %v err %v, want %s", server, s, err, want)
		}
	}
}

// The timeout bounds the whole delivery, not each step: a relay that
// answers every command just inside it (here the greeting and the EHLO)
// must not hold a sign-in request for several times as long. go-mail
// extends its deadline after the greeting and again before MAIL FROM.
func TestSMTPTimeoutBoundsTheWholeDelivery(t *testing.T) {
	const timeout = 400 * time.Millisecond
	srv := smtptest.Start(t, smtptest.Options{SlowReplies: []time.Duration{250 * time.Millisecond, 250 * time.Millisecond}})
	s, _ := newSender(t, srv.URL("smtp", ""), email.SMTPOptions{Timeout: timeout})
	start := time.Now()
	err := s.Send(context.Background(), testMessage)
	took := time.Since(start)
	if err == nil {
		t.Fatalf("delivered after %v with a %v timeout", took, timeout)
	}
	if took > timeout+300*time.Millisecond {
		t.Fatalf("Send took %v with a %v timeout", took, timeout)
	}
	if n := len(srv.Mails()); n != 0 {
		t.Fatalf("%d messages received", n)
	}
}

// Once the relay has accepted the message (250 after DATA), it is
// delivered: a QUIT that goes unanswered must not turn that into a
// failure, for which the caller would delete the link the user is about
// to receive and tell them sending failed.
func TestSMTPAcceptedMessageIsDeliveredWhateverQUITDoes(t *testing.T) {
	const timeout = 300 * time.Millisecond
	// Replies: greeting, EHLO, NOOP, MAIL, RCPT, DATA (354), the message
	// (250), then QUIT's, held back past the timeout.
	slow := make([]time.Duration, 8)
	slow[7] = time.Second
	srv := smtptest.Start(t, smtptest.Options{SlowReplies: slow})
	s, logs := newSender(t, srv.URL("smtp", ""), email.SMTPOptions{Timeout: timeout})
	if err := s.Send(context.Background(), testMessage); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if n := len(srv.Mails()); n != 1 {
		t.Fatalf("%d messages received", n)
	}
	if !strings.Contains(logs.String(), "delivered") {
		t.Fatalf("log: %s", logs)
	}
}

// A recipient the mailer cannot read is refused before any connection,
// and the error names it masked: go-mail's own quotes it whole, and a
// notice's address comes from the user row, not always from Normalize.
func TestSMTPUnreadableRecipientIsMasked(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	s, logs := newSender(t, srv.URL("smtp", ""), email.SMTPOptions{})
	m := testMessage
	m.To = "alice.smith@example.com."
	err := s.Send(context.Background(), m)
	if err == nil {
		t.Fatal("Send accepted an unreadable recipient")
	}
	if out := err.Error() + logs.String(); strings.Contains(out, "alice.smith") {
		t.Fatalf("the recipient's full address leaked: %s", out)
	}
	if n := len(srv.Mails()); n != 0 {
		t.Fatalf("%d messages received", n)
	}
}

// The EHLO name is the server URL's ?name= (an IDN in ASCII), else
// SMTPOptions.Hello, else localhost: never this machine's host name,
// which a container makes its id and relays wanting a fully qualified
// name refuse.
func TestSMTPHelloName(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	for _, tc := range []struct{ query, hello, want string }{
		{"", "", "localhost"},
		{"", "auth.example.com", "auth.example.com"},
		{"?name=Mail.B%C3%BCcher.example", "auth.example.com", "mail.xn--bcher-kva.example"},
		{"?insecure=false&name=%5B192.0.2.1%5D", "", "[192.0.2.1]"},
	} {
		s, _ := newSender(t, srv.URL("smtp", "")+tc.query, email.SMTPOptions{Hello: tc.hello})
		if err := s.Send(context.Background(), testMessage); err != nil {
			t.Fatalf("%q: Send: %v", tc.query, err)
		}
		if got := srv.Mails()[len(srv.Mails())-1].Helo; got != tc.want {
			t.Errorf("query %q, Hello %q: EHLO %q, want %q", tc.query, tc.hello, got, tc.want)
		}
	}
}
