package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/passkey"
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
	// Constants of the handler packages are checked by their own tests
	// (app/nextauth, app/accountpages, app/emailflow).
	msgConsts := map[string]string{}
	for name, id := range msgConsts {
		known(id, name)
	}

	// The literal ids the handlers pass: titles, headings, lines, links
	// and the messages of the account pages.
	literal := regexp.MustCompile(`(?:\.[pP]age\(c, rq, |passwordForm\(c, rq, |Heading: |LinkText: |Lines: +\[\]string\{|checkEmail\(c, rq, |accountPage\(c, rq, [\w.]+, |signUpForm\(c, rq, [\w.]+, \w+, |signUpVerifyPage\([\w.]+, |msg = |d\.(?:Error|Notice) = |v\.LabelID = |confirmPage\(c, rq, p, [\w.]+, [\w.]+, )(?:"([^"]*)"|(msg\w+))`)
	// Package app and its handler packages (app/nextauth, ...).
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	below, err := filepath.Glob("*/*.go")
	require.NoError(t, err)
	files = append(files, below...)
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
				if strings.Contains(f, "/") {
					continue // a handler package's constant: its own test knows it
				}
				require.Contains(t, msgConsts, m[2], "%s passes %s: a message constant this test knows", f, m[2])
				continue
			}
			known(m[1], f)
		}
	}
	require.Greater(t, seen, 30, "the scan finds the handlers' messages")
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

// A catalogue handed to New (Options.Langs) is used only when it was
// loaded for the config's i18n settings: otherwise an instance would
// offer languages its config does not, so New refuses to start.
func TestGivenLangsMatchConfig(t *testing.T) {
	de := fstest.MapFS{
		"en.toml": {Data: []byte("LanguageName = \"English\"\nDirection = \"ltr\"\n")},
		"de.toml": {Data: []byte("LanguageName = \"Deutsch\"\nDirection = \"ltr\"\n")},
	}
	c, err := i18n.Load(de, "de", nil)
	require.NoError(t, err)
	got, err := loadLangs(config.I18n{Default: "de", Languages: []string{}}, c)
	require.NoError(t, err)
	require.Same(t, c, got)
	_, err = loadLangs(config.I18n{Languages: []string{"de"}}, c)
	require.ErrorContains(t, err, "Options.Langs was loaded for other i18n settings")
}
