package nextauth

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/views"
)

// Pages of the password flows, below the base path, linked from the
// sign-in page's password form.
const (
	signupPath = "/signup" // create an account (only when the provider's signup is on)
	resetPath  = "/reset"  // forgot password: ask for a reset link
)

// viewOf is a provider as the sign-in page shows it. A credentials form
// posts to the callback, as next-auth's, and links to the sign-up and
// reset pages.
func (h *Handler) viewOf(p config.Provider, info providerInfo) views.Provider {
	v := views.Provider{ID: p.ID, Name: info.Name, Type: p.Type, SigninURL: info.SigninURL}
	if p.Name == "" { // next-auth's default names, in the page's language
		switch p.Type {
		case config.TypeEmail:
			v.LabelID = "SignInWithEmail"
		case config.TypeCredentials:
			v.LabelID = "SignInWithCredentials"
		}
	}
	if p.Type == config.TypeWebAuthn {
		v.CallbackURL, v.OptionsURL = info.CallbackURL, h.base.URL("/webauthn-options/"+p.ID)
	}
	if p.Type == config.TypeCredentials {
		v.CallbackURL = info.CallbackURL
		if !h.sendsMail { // no links to send: no sign-up, no reset
			return v
		}
		v.ResetURL = h.base.URL(resetPath)
		if p.SignupEnabled() {
			v.SignupURL = h.base.URL(signupPath)
		}
	}
	return v
}
