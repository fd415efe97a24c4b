package main

import (
	"fmt"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// harness is what every dialect and size shares: the options, the built
// binaries, the bare handler, the PostgreSQL server, and the SMTP server
// and OpenID Connect provider the sign-ins go through.
type harness struct {
	o       options
	dir     string // the run's temporary folder
	bin     string // latchkey, built
	bare    *proc
	pgAdmin string // "" without PostgreSQL
	smtp    *smtptest.Server
	box     *mailbox
	idp     *mockoidc.MockOIDC
}

// config is latchkey's config file: database sessions with the lookup
// cache off (every request reads the database), the e-mail provider
// sending to the bench's SMTP server with its rate limit off (every
// sign-in comes from 127.0.0.1), a password provider (its throttle counts
// only failures, and the bench's passwords are right), and the generic
// OpenID Connect provider "github" on the bench's IdP, matching the
// filled accounts.
func (h *harness) config(dataDir string) string {
	return fmt.Sprintf(`data_dir: %q
providers:
  - id: email
    type: email
    server: %q
    from: "Sign in <no-reply@scale.example>"
    rate_limit:
      disabled: true
  - id: %s
    type: credentials
    signup: false
  - id: %s
    type: oidc
    name: Scale IdP
    issuer: %q
    client_id: %q
    client_secret: %q
session:
  strategy: database
  cache_ttl: 0s
`, dataDir, h.smtp.URL("smtp", ""), passwordProvider, oauthProvider, h.idp.Issuer(), h.idp.Config().ClientID, h.idp.Config().ClientSecret)
}
