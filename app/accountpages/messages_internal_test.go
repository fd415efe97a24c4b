package accountpages

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// TestMessageIDsKnown: every message id the account pages hand to the
// views (the password and passkey pages' messages, titles and headings)
// is in the English catalogue, so no page ever shows an id instead of a
// sentence.
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
		known(passkeyMessage(string(code)), "passkeyMessage")
	}
	for _, code := range []string{"LastSignInMethod", "NotFound"} {
		require.NotEmpty(t, passkeyMessage(code))
		known(passkeyMessage(code), "passkeyMessage")
	}
	for _, err := range []error{password.ErrEmpty, password.ErrInputTooBig, password.ErrInvalidUTF8, password.ErrNUL,
		password.ErrTooShort, password.ErrTooLong, password.ErrCommon, password.ErrEqualsEmail, password.ErrBusy, errors.New("other")} {
		known(policyMessage(err), "policyMessage("+err.Error()+")")
	}
	msgConsts := map[string]string{"msgExpired": msgExpired, "msgBadAddress": msgBadAddress, "msgRateLimited": msgRateLimited,
		"msgDeadLink": msgDeadLink, "msgThrottled": msgThrottled}
	for name, id := range msgConsts {
		known(id, name)
	}
	try := web.TryLater("", nil).Notice
	known(try.Heading, "web.TryLater")
	known(try.Lines[0], "web.TryLater")

	// The literal ids the handlers pass: titles, headings, lines, links
	// and the messages of the account pages.
	literal := regexp.MustCompile(`(?:Page\(c, rq, |passwordForm\(c, rq, |Heading: |LinkText: |Lines: +\[\]string\{|checkEmail\(c, rq, |accountPage\(c, rq, (?:u, )?[\w.]+, |signUpForm\(c, rq, [\w.]+, \w+, |signUpVerifyPage\([\w.]+, |msg = |d\.(?:Error|Notice) = )(?:"([^"]*)"|(msg\w+))`)
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
	require.Greater(t, seen, 30, "the scan finds the handlers' messages")
}

// TestMessagesStateTheLifetimes: the catalogues write the reset link's
// life as words ("30 minutes"); this holds the code to it.
func TestMessagesStateTheLifetimes(t *testing.T) {
	c, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	en := c.Default()
	require.Equal(t, 30*time.Minute, accounts.ResetLinkMaxAge)
	for _, id := range []string{"ResetCheckEmail", "ResetEmailLine", "AddPasswordCheckEmail"} {
		require.Contains(t, en.T(id, "Host", "h"), "30 minutes", id)
	}
}
