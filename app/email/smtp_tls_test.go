package email_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// remoteURL is srv as a relay named smtptest.RemoteHost, which is not
// loopback: with srv.Dial as SMTPOptions.Dial the client still connects to
// srv, but decides as it would towards a relay across the network.
func remoteURL(srv *smtptest.Server, scheme, userinfo, query string) string {
	_, port, _ := net.SplitHostPort(srv.Addr)
	if userinfo != "" {
		userinfo += "@"
	}
	return scheme + "://" + userinfo + smtptest.RemoteHost + ":" + port + query
}

// An on-path attacker can strip STARTTLS from the greeting: towards a relay
// that is not loopback, a server that does not offer it is refused, and
// nothing is sent.
func TestSMTPRequiresStartTLSToARemoteRelay(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	s, _ := newSender(t, remoteURL(srv, "smtp", "", ""), email.SMTPOptions{Dial: srv.Dial})
	err := s.Send(context.Background(), testMessage)
	require.Error(t, err, "delivered in plain text to a remote relay")
	require.Contains(t, err.Error(), "STARTTLS")
	require.Contains(t, err.Error(), "insecure=true", "the error names the opt-out")
	require.Empty(t, srv.Mails())
}

// A loopback relay (a local MTA) has no one on the path: plain text is
// fine there, under each of the names that mean loopback.
func TestSMTPLoopbackRelayNeedsNoTLS(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	_, port, _ := net.SplitHostPort(srv.Addr)
	for i, host := range []string{"127.0.0.1", "127.0.0.2", "localhost", "LocalHost", "[::1]"} {
		s, _ := newSender(t, "smtp://"+host+":"+port, email.SMTPOptions{Dial: srv.Dial})
		require.NoError(t, s.Send(context.Background(), testMessage), host)
		m := srv.Wait(t, i+1)[i]
		require.False(t, m.TLS)
	}
}

// ?insecure=true is the explicit opt-out: plain text to a remote relay,
// as long as no credentials would cross the network with it.
func TestSMTPInsecureOptOut(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	s, logs := newSender(t, remoteURL(srv, "smtp", "", "?insecure=true"), email.SMTPOptions{Dial: srv.Dial})
	require.NoError(t, s.Send(context.Background(), testMessage))
	require.False(t, srv.Wait(t, 1)[0].TLS)
	require.Contains(t, logs.String(), "delivered")

	parsed, err := email.ParseServer(remoteURL(srv, "smtp", "", "?insecure=true"))
	require.NoError(t, err)
	require.True(t, parsed.Insecure)
	require.Contains(t, parsed.Warning(), "plain text", "check-config and the start-up log say so")
}

// Even with insecure=true, the relay password never crosses the network in
// plain text, not even as a CRAM-MD5 digest (crackable offline): without
// STARTTLS there is no AUTH at all, and the error says why without the
// password.
func TestSMTPInsecureNeverAuthenticatesInPlainText(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: "mailer", Password: "s3cr3t-pass", CRAMMD5: true})
	s, logs := newSender(t, remoteURL(srv, "smtp", "mailer:s3cr3t-pass", "?insecure=true"), email.SMTPOptions{Dial: srv.Dial})
	err := s.Send(context.Background(), testMessage)
	require.Error(t, err, "authenticated and delivered in plain text")
	require.Empty(t, srv.AuthAttempts(), "AUTH was sent without TLS")
	require.Empty(t, srv.Mails())
	require.Contains(t, err.Error(), "password")
	require.Contains(t, err.Error(), "STARTTLS")
	require.NotContains(t, err.Error()+logs.String(), "s3cr3t-pass")

	// The same relay on loopback may authenticate in plain text.
	_, port, _ := net.SplitHostPort(srv.Addr)
	s, _ = newSender(t, "smtp://mailer:s3cr3t-pass@localhost:"+port, email.SMTPOptions{Dial: srv.Dial})
	require.NoError(t, s.Send(context.Background(), testMessage))
	require.Equal(t, "mailer", srv.Wait(t, 1)[0].Auth)
}

// A remote relay that offers STARTTLS gets the message and the credentials
// over TLS, its certificate checked against the configured host name.
func TestSMTPStartTLSToARemoteRelay(t *testing.T) {
	serverTLS, clientTLS := smtptest.SelfSigned(t)
	roots := clientTLS.Clone()
	roots.ServerName = "" // filled in from the URL
	for _, insecure := range []string{"", "?insecure=true"} {
		srv := smtptest.Start(t, smtptest.Options{TLS: serverTLS, Username: "mailer", Password: "s3cr3t-pass", CRAMMD5: true})
		s, _ := newSender(t, remoteURL(srv, "smtp", "mailer:s3cr3t-pass", insecure), email.SMTPOptions{Dial: srv.Dial, TLSConfig: roots})
		require.NoError(t, s.Send(context.Background(), testMessage), insecure)
		m := srv.Wait(t, 1)[0]
		require.True(t, m.TLS)
		require.Equal(t, "mailer", m.Auth)
		require.Equal(t, []bool{true}, srv.AuthAttempts(), "AUTH only after STARTTLS")
	}

	// smtps:// is TLS from the first byte, under the remote name too.
	srv := smtptest.Start(t, smtptest.Options{TLS: serverTLS, Implicit: true})
	s, _ := newSender(t, remoteURL(srv, "smtps", "", ""), email.SMTPOptions{Dial: srv.Dial, TLSConfig: roots})
	require.NoError(t, s.Send(context.Background(), testMessage))
	require.True(t, srv.Wait(t, 1)[0].TLS)
}

// insecure takes true or false and only on smtp://; no other option exists,
// so a nodemailer option is refused rather than silently ignored.
func TestParseServerOptions(t *testing.T) {
	for _, bad := range []string{
		"smtps://relay.example.com?insecure=true",
		"smtp://relay.example.com?insecure=yes",
		"smtp://relay.example.com?insecure=true&insecure=false",
		"smtp://relay.example.com?requireTLS=false",
	} {
		_, err := email.ParseServer(bad)
		require.Error(t, err, bad)
	}
	for raw, insecure := range map[string]bool{
		"smtp://relay.example.com":                  false,
		"smtp://relay.example.com/?insecure=false":  false,
		"smtp://relay.example.com:25?insecure=true": true,
	} {
		s, err := email.ParseServer(raw)
		require.NoError(t, err, raw)
		require.Equal(t, insecure, s.Insecure, raw)
	}
	for host, loopback := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "[::1]": true, "localhost": true, "LocalHost.": true, "[::ffff:127.0.0.1]": true,
		"10.0.0.1": false, "relay.example.com": false, "localhost.example.com": false, "[::2]": false,
	} {
		s, err := email.ParseServer("smtp://" + host)
		require.NoError(t, err, host)
		require.Equal(t, loopback, s.Loopback(), host)
	}
}

// Every name Loopback accepts may authenticate without TLS, with PLAIN as
// with CRAM-MD5: go-mail's own exception knows only localhost, 127.0.0.1
// and ::1.
func TestSMTPLoopbackRelayAuthenticatesUnderEveryLoopbackName(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: "mailer", Password: "s3cr3t-pass"})
	_, port, _ := net.SplitHostPort(srv.Addr)
	for i, host := range []string{"localhost", "127.0.0.2", "LocalHost", "localhost.", "[::1]"} {
		s, _ := newSender(t, "smtp://mailer:s3cr3t-pass@"+host+":"+port, email.SMTPOptions{Dial: srv.Dial})
		require.NoError(t, s.Send(context.Background(), testMessage), host)
		require.Equal(t, "mailer", srv.Wait(t, i+1)[i].Auth, host)
	}
}
