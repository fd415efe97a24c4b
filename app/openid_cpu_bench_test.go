package app_test

import (
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// BenchmarkOpenIDRoundTripCPU is the CPU latchkey spends as an OpenID
// Provider on one whole round trip of a relying party, the browser
// already signed in to latchkey and the client first-party (no consent
// page): GET /oidc/authorize (the request stored), GET /oidc/continue
// (the session read, the request completed), GET /oidc/authorize/callback
// (the code issued), POST /oidc/token (client secret, PKCE, the code
// claimed, access and ID token made, the ID token signed). SQLite, each
// session strategy, each signing algorithm. Measured as the sign-in
// benchmarks are (cpuMeter: the thread CPU time of latchkey's requests,
// latchkey-µs/op, and per route); ns/op, cpu-ns/op and allocs/op are the
// whole process's, the relying party's and the browser's side included
// (the ID token is verified once before the loop, not in it). The
// app's clock stands still, as in the provider's tests.
func BenchmarkOpenIDRoundTripCPU(b *testing.B) {
	for _, strategy := range strategies() {
		for _, alg := range []string{"RS256", "ES256"} {
			b.Run(strategy+"/"+alg, func(b *testing.B) {
				m := newCPUMeter()
				e := startEnv(b, envOpts{
					ownURL: true, strategy: strategy, wrap: m.wrap, smtp: &smtptest.Options{},
					clock: &testClock{now: time.Now().UTC().Truncate(time.Second)}, // the RP's verifier reads it
					email: func(p *config.Provider) { p.RateLimit.Disabled = true },
					config: func(c *config.Config) {
						c.OpenID.Enabled = true
						c.OpenID.SigningAlgorithm = alg
						c.OpenID.Clients = opClients()
						// b.N authorization requests from one client.
						c.OpenID.AuthorizeLimit.Disabled = true
					},
				})
				c := e.signedIn("ada@example.com")
				r := e.relyingParty("tool", rpSecret) // first-party: no consent

				// Once through, the ID token verified: the loop measures a
				// round trip that works.
				res, a := r.authorize(c)
				if _, id, err := r.exchange(r.codeFrom(res, a), a); err != nil || id.Subject == "" {
					b.Fatalf("exchange: %v", err)
				}
				b.ReportAllocs()
				defer cpuPerOp(b)()
				m.measure(b, func() {
					res, a := r.authorize(c)
					tok, err := r.oauth.Exchange(r.ctx(), r.codeFrom(res, a), oauth2.VerifierOption(a.verifier))
					if err != nil {
						b.Fatal(err)
					}
					if raw, _ := tok.Extra("id_token").(string); raw == "" || res.StatusCode != http.StatusFound {
						b.Fatal("no ID token")
					}
				})
			})
		}
	}
}
