package catalogue

import "github.com/latchkey-auth/latchkey/app/config"

// DisplayName is a provider's name on pages and in e-mails: the configured
// one, the catalogue's, or next-auth's default for its type.
func DisplayName(p config.Provider) string {
	if p.Name != "" {
		return p.Name
	}
	switch p.Type {
	case config.TypeEmail:
		return "Email"
	case config.TypeCredentials:
		return "Credentials" // next-auth's default name
	case config.TypeOAuth:
		if s, ok := Lookup(p.ID); ok {
			return s.Name
		}
	}
	return p.ID
}
