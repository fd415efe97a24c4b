package app_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// mailClosedPort is a loopback address nothing listens on.
func mailClosedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// SMTP down (connection refused): EmailSignin, the token is removed, and
// the log says why without the password or the link.
func TestEmailSMTPDown(t *testing.T) {
	down := mailClosedPort(t)
	e := startMail(t, envOpts{smtpURL: func(*smtptest.Server) string { return "smtp://mailer:hunter2@" + down }})
	for _, json := range []string{"", "true"} {
		res := e.requestLink(e.browser(), "alice@example.com", map[string][]string{"json": {json}})
		if json == "" {
			e.requireError(res, "EmailSignin")
		} else {
			require.JSONEq(t, `{"url":"`+e.base+`/error?error=EmailSignin"}`, res.body)
		}
	}
	require.Zero(t, e.tokens())
	logs := e.logs.String()
	require.Contains(t, logs, "e-mail not delivered to a***@example.com")
	require.NotContains(t, logs, "alice@example.com", "addresses are logged masked")
	require.Contains(t, logs, down)
	require.NotContains(t, logs, "hunter2")
	require.NotContains(t, logs, "token=")
}

// The server refuses the recipient (550): EmailSignin, token removed; other
// recipients still work.
func TestEmailSMTPRejectsRecipient(t *testing.T) {
	e := startMail(t, envOpts{smtp: &smtptest.Options{RejectRcpt: func(to string) bool { return to == "nobody@example.com" }}})
	e.requireError(e.requestLink(e.browser(), "nobody@example.com", nil), "EmailSignin")
	require.Zero(t, e.tokens())
	require.Contains(t, e.logs.String(), "550")

	c := e.browser()
	require.Equal(t, http.StatusFound, e.get(c, e.emailLink(c, "alice@example.com", e.origin+"/")).StatusCode)
	addr, _ := e.sessionUser(c)
	require.Equal(t, "alice@example.com", addr)
}

// Credentials from the server URL are used (AUTH PLAIN to a loopback server).
func TestEmailSMTPAuth(t *testing.T) {
	e := startMail(t, envOpts{
		smtp:    &smtptest.Options{Username: "mailer", Password: "s3cr:t@"},
		smtpURL: func(s *smtptest.Server) string { return s.URL("smtp", "mailer:s3cr%3At%40") },
	})
	e.emailLink(e.browser(), "alice@example.com", e.origin+"/")
	m, _ := e.mail(1)
	require.Equal(t, "mailer", m.Auth)
	require.NotContains(t, e.logs.String(), "s3cr")
}

// Development: with no SMTP server the link goes to the log (with a
// warning) and works.
func TestEmailWithoutServerLogsLink(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.Server = "" }})
	c := e.browser()
	res := e.requestLink(c, "alice@example.com", map[string][]string{"callbackUrl": {e.origin + "/dev"}})
	require.Equal(t, e.base+"/verify-request?provider=email&type=email", res.location())
	require.Empty(t, e.smtp.Mails())
	logs := e.logs.String()
	require.Contains(t, logs, "no SMTP server configured")
	link := linkRE.FindString(logs)
	require.NotEmpty(t, link)
	link = strings.Trim(link, `"`)

	res = e.get(c, link)
	require.Equal(t, e.origin+"/dev", res.location())
	addr, _ := e.sessionUser(c)
	require.Equal(t, "alice@example.com", addr)
	require.EqualValues(t, 1, e.counts().Users)
}

// A server URL that cannot be used stops app.New with a clear error that
// does not show the password.
func TestEmailBadServerURL(t *testing.T) {
	cfg := testConfig(t)
	cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail, Server: "smtp://u:hunter2@mail.example.com:99999"}}
	_, err := buildApp(cfg)
	require.Error(t, err)
	require.Contains(t, err.Error(), "provider email")
	require.NotContains(t, err.Error(), "hunter2")
}

// Without `from`, mail comes from no-reply@ the service's host (localhost
// when the service is addressed by IP, as here).
func TestEmailDefaultFrom(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.From = "" }})
	e.emailLink(e.browser(), "alice@example.com", e.origin+"/")
	m, msg := e.mail(1)
	require.Equal(t, "no-reply@localhost", m.From)
	require.Equal(t, "<no-reply@localhost>", msg.Header.Get("From"))
}
