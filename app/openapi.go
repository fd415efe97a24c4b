package app

import (
	"fmt"

	"github.com/latchkey-auth/latchkey/app/openapi"
)

// openAPIDocument is the embedded OpenAPI document (app/openapi/openapi.yaml)
// as JSON naming this instance: its base URL, the root of its listener and
// its cookie names (bindingCookie: the e-mail flow's). Rendered once, at
// start-up.
func (a *App) openAPIDocument(bindingCookie string) ([]byte, error) {
	doc, err := openapi.Render(openapi.Instance{
		BaseURL: a.base.URL(""),
		Origin:  a.base.Origin,
		Cookies: map[string]string{
			"session-token": a.names.SessionToken,
			"csrf-token":    a.names.CSRF,
			"callback-url":  a.names.CallbackURL,
			"oauth-check":   a.names.OAuthCheck,
			"email-binding": bindingCookie,
			"challenge":     a.passkeys.CookieName(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return doc, nil
}
