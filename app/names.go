package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
)

// providerName is the display name: the configured one, the catalogue's, or a default.
func providerName(p config.Provider) string {
	if p.Name != "" {
		return p.Name
	}
	switch p.Type {
	case config.TypeEmail:
		return "Email"
	case config.TypeCredentials:
		return "Credentials" // next-auth's default name
	case config.TypeOAuth:
		if s, ok := catalogue.Lookup(p.ID); ok {
			return s.Name
		}
	}
	return p.ID
}

// CatalogueExtra adapts the goth catalogue to config.Validate.
func CatalogueExtra(id string) ([]string, bool) {
	s, ok := catalogue.Lookup(id)
	return s.Extra, ok
}
