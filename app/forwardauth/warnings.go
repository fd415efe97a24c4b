package forwardauth

import (
	"fmt"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
)

// AccessWarnings are check-config's (and the start-up log's) warnings
// about access rules beside OAuth providers that do not verify e-mail
// addresses: anyone can type any address there, so those users' addresses
// count as unverified, and e-mail rules refuse them, groups rules give
// them no groups and Remote-Email is left out (issue 26 M2). OpenID Connect providers drop an address the
// IdP marks unverified, so they need no warning.
func AccessWarnings(cfg config.Config) []string {
	if len(cfg.Access) == 0 && len(cfg.Groups.Rules) == 0 {
		return nil
	}
	var out []string
	for _, p := range cfg.Providers {
		if (p.Type != "" && p.Type != config.TypeOAuth) || p.TrustEmail || catalogue.VerifiesEmail(p.ID) {
			continue
		}
		out = append(out, fmt.Sprintf("access: provider %q does not verify e-mail addresses: its users' addresses count as unverified, so emails/domains rules refuse them (403), groups rules give them no groups and forward-auth sends no Remote-Email for them; use a provider that verifies addresses (or trust_email, if you know this one does)", p.ID))
	}
	return out
}
