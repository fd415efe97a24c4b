package nextauth

import (
	"testing"

	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// TestCodeMessagesKnown: the sign-in page's message and the error page's
// heading and lines of every NextAuth error code are in the English
// catalogue, so no page ever shows an id instead of a sentence.
func TestCodeMessagesKnown(t *testing.T) {
	c, err := i18n.Load(views.Locales(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	en := c.Default()
	known := func(id, from string) {
		t.Helper()
		if id != "" && en.T(id) == id {
			t.Errorf("%s: message %q is not in en.toml", from, id)
		}
	}
	for _, code := range []signin.Code{"", "Nonsense", signin.CodeSignin, signin.CodeOAuthSignin, signin.CodeOAuthCallback,
		signin.CodeOAuthCreateAccount, signin.CodeEmailCreateAccount, signin.CodeCallback, signin.CodeOAuthAccountNotLinked,
		signin.CodeEmailSignin, signin.CodeCredentialsSignin, signin.CodeSessionRequired, signin.CodeAccessDenied,
		signin.CodeVerification, signin.CodeConfiguration, signin.CodeWebAuthnVerification, signin.CodeTryLater} {
		known(signinMessage(code), "signinMessage("+string(code)+")")
		ep := errorPageFor(code)
		known(ep.heading, "errorPageFor("+string(code)+")")
		for _, l := range ep.lines {
			known(l, "errorPageFor("+string(code)+")")
		}
	}
}
