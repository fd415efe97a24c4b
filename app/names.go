package app

import "github.com/latchkey-auth/latchkey/app/oauth/catalogue"

// CatalogueExtra adapts the goth catalogue to config.Validate.
func CatalogueExtra(id string) ([]string, bool) {
	s, ok := catalogue.Lookup(id)
	return s.Extra, ok
}
