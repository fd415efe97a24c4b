package app_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// latchkey names itself in EHLO by SERVICE_URL's host (in ASCII), not by
// this machine's host name; the server URL's ?name= overrides it.
func TestSMTPHelloIsTheServiceHost(t *testing.T) {
	e := startMail(t, envOpts{config: func(c *config.Config) {
		c.ServiceURL = strings.Replace(c.ServiceURL, "127.0.0.1", "Auth.Bücher.localhost", 1)
	}})
	e.emailLink(e.browser(), "ada@example.com", e.origin)
	require.Equal(t, "auth.xn--bcher-kva.localhost", e.smtp.Mails()[0].Helo)
}
