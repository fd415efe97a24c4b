package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// BenchmarkEmailSignInTwoInstances is a whole e-mail sign-in per
// iteration, on two instances sharing one PostgreSQL database and one SMTP
// catcher: the link is asked for on one instance (CSRF dance, rate limits
// in the database, token row, SMTP delivery) and redeemed on the other
// (token consumed, user created, session row), alternating. ns/op is the
// time of one sign-in with both instances and the database on this machine.
func BenchmarkEmailSignInTwoInstances(b *testing.B) {
	dsn := pgtest.NewDatabase(b, postgres.URL(b))
	catcher := smtptest.Start(b, smtptest.Options{})
	var apps []*env
	for range 2 {
		apps = append(apps, startEnv(b, envOpts{
			smtp: &smtptest.Options{}, catcher: catcher,
			email:  func(p *config.Provider) { p.RateLimit.Disabled = true },
			config: func(cfg *config.Config) { cfg.DatabaseURL = dsn },
		}))
	}
	on := func(e *env, link string) string { return e.srv.URL + strings.TrimPrefix(link, e.origin) }
	home := apps[0].origin + "/home"
	i := 0
	for b.Loop() {
		asked, redeemed := apps[i%2], apps[(i+1)%2]
		c := asked.browser()
		link := asked.emailLink(c, fmt.Sprintf("user%d@example.com", i), home)
		res := redeemed.get(c, on(redeemed, link))
		if res.StatusCode != http.StatusFound || res.location() != home {
			b.Fatalf("sign-in %d: %d %q", i, res.StatusCode, res.location())
		}
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "signins/s")
}
