package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// TestMessageIDsKnown: every message id the handlers hand to the views
// (error codes' messages, error pages, the password and passkey pages'
// messages, titles and headings) is in the English catalogue, so no page
// ever shows an id instead of a sentence.
func TestMessageIDsKnown(t *testing.T) {
	c, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	en := c.Default()
	known := func(id, from string) {
		t.Helper()
		if id != "" && en.T(id) == id {
			t.Errorf("%s: message %q is not in en.toml", from, id)
		}
	}
	codes := []signin.Code{"", "Nonsense", signin.CodeSignin, signin.CodeOAuthSignin, signin.CodeOAuthCallback,
		signin.CodeOAuthCreateAccount, signin.CodeEmailCreateAccount, signin.CodeCallback, signin.CodeOAuthAccountNotLinked,
		signin.CodeEmailSignin, signin.CodeCredentialsSignin, signin.CodeSessionRequired, signin.CodeAccessDenied,
		signin.CodeVerification, signin.CodeConfiguration, signin.CodeWebAuthnVerification}
	for _, code := range codes {
		known(signinMessage(code), "signinMessage("+string(code)+")")
		ep := errorPageFor(code)
		known(ep.heading, "errorPageFor("+string(code)+")")
		for _, l := range ep.lines {
			known(l, "errorPageFor("+string(code)+")")
		}
	}
	msgConsts := map[string]string{"msgExpired": msgExpired}
	for name, id := range msgConsts {
		known(id, name)
	}

	// The literal ids the handlers pass: titles, headings, lines, links
	// and the messages of the account pages.
	literal := regexp.MustCompile(`(?:Page\(c, rq, |passwordForm\(c, rq, |Heading: |LinkText: |Lines: +\[\]string\{|checkEmail\(c, rq, |accountPage\(c, rq, [\w.]+, |signUpForm\(c, rq, [\w.]+, \w+, |signUpVerifyPage\([\w.]+, |msg = |d\.(?:Error|Notice) = |v\.LabelID = |confirmPage\(c, rq, p, [\w.]+, [\w.]+, )(?:"([^"]*)"|(msg\w+))`)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			seen++
			if m[2] != "" {
				require.Contains(t, msgConsts, m[2], "%s passes %s: a message constant this test knows", f, m[2])
				continue
			}
			known(m[1], f)
		}
	}
	require.Greater(t, seen, 5, "the scan finds the handlers' messages (the account pages': app/accountpages)")
}

// TestMessagesStateTheLifetimes: the catalogues write the passkey
// re-authentication window as words ("10 minutes"); this holds the code to
// it (the reset link's life: app/accountpages).
func TestMessagesStateTheLifetimes(t *testing.T) {
	c, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	en := c.Default()
	require.Equal(t, 10*time.Minute, passkey.ReauthWindow)
	require.Contains(t, en.T("PasskeyReauth"), "10 minutes")
}
