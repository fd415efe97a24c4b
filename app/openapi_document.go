package app

import (
	"fmt"

	"github.com/latchkey-auth/latchkey/app/openapi"
)

// openAPIDocument is the embedded OpenAPI document (app/openapi/openapi.yaml)
// as JSON naming this instance: its base URL, the root of its listener and
// its cookie names (bindingCookie: the e-mail flow's) and the optional
// features it serves (two-factor, openid). Rendered once, at start-up.
func (w *wiring) openAPIDocument(bindingCookie string) ([]byte, error) {
	doc, err := openapi.Render(openapi.Instance{
		BaseURL: w.base.URL(""),
		Origin:  w.base.Origin,
		Cookies: map[string]string{
			"session-token":   w.names.SessionToken,
			"csrf-token":      w.names.CSRF,
			"callback-url":    w.names.CallbackURL,
			"oauth-check":     w.names.OAuthCheck,
			"email-binding":   bindingCookie,
			"challenge":       w.passkeys.CookieName(),
			"second-step":     w.names.SecondStep,
			"device":          w.names.Device,
			"password-device": w.names.PasswordDevice,
		},
		// The two-factor routes are mounted only when two_factor.mode is on,
		// the OpenID Provider's (and the account's apps) with oidc.enabled.
		Features: map[string]bool{"two-factor": w.cfg.TwoFactor.On(), "openid": w.cfg.OpenID.Enabled},
	})
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return doc, nil
}
