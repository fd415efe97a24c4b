package views_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/views"
)

// catalogue is one locales/<tag>.toml as a flat map.
func catalogue(t *testing.T, file string) map[string]string {
	t.Helper()
	buf, err := fs.ReadFile(views.Locales(), file)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, toml.Unmarshal(buf, &m), "%s: every value is a plain string", file)
	return m
}

var placeholder = regexp.MustCompile(`{{\s*\.(\w+)\s*}}`)

// placeholders are a message's placeholder names, sorted.
func placeholders(s string) []string {
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names
}

// TestCataloguesComplete holds every shipped language to the English
// source: the same keys, and in each message the same placeholders, so a
// translation can neither miss a text nor drop or invent a value.
func TestCataloguesComplete(t *testing.T) {
	files, err := fs.Glob(views.Locales(), "*.toml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 12, "at least 12 languages ship")
	en := catalogue(t, "en.toml")
	for _, f := range files {
		if f == "en.toml" {
			continue
		}
		t.Run(f, func(t *testing.T) {
			m := catalogue(t, f)
			for k, v := range en {
				tr, ok := m[k]
				if !ok {
					t.Errorf("%s misses %s (English: %q)", f, k, v)
					continue
				}
				if strings.TrimSpace(tr) == "" {
					t.Errorf("%s: %s is empty", f, k)
				}
				if !slices.Equal(placeholders(tr), placeholders(v)) {
					t.Errorf("%s: %s has placeholders %v, English has %v", f, k, placeholders(tr), placeholders(v))
				}
			}
			for k := range m {
				if _, ok := en[k]; !ok {
					t.Errorf("%s has %s, which English does not", f, k)
				}
			}
			require.NotEqual(t, en["LanguageName"], m["LanguageName"], "LanguageName is the language's own name")
		})
	}
}

// TestShippedLanguages: the catalogues load, with the scripts and
// directions the issue promises (a right-to-left and CJK languages).
func TestShippedLanguages(t *testing.T) {
	c, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	for _, tag := range []string{"en", "de", "fr", "es", "pt-BR", "it", "nl", "pl", "ja", "zh-CN", "ko", "ar"} {
		require.Contains(t, c.Languages(), tag)
	}
	ar, ok := c.Param("ar")
	require.True(t, ok)
	require.Equal(t, "rtl", ar.Dir())
	ja, _ := c.Param("ja")
	require.Equal(t, "ltr", ja.Dir())
	require.NotEqual(t, c.Default().T("SignInHeading"), ja.T("SignInHeading"))
}

// usedIDs are the message ids the views name literally.
var usedIDs = regexp.MustCompile(`(?:\bT|bold|boldHTML)\((?:[\w.]+, )?"(\w+)"`)

// TestViewsUseKnownMessages: every message id a view or an e-mail names
// is in the English catalogue (a missing one would show its id).
func TestViewsUseKnownMessages(t *testing.T) {
	en := catalogue(t, "en.toml")
	files, err := filepath.Glob("*.templ")
	require.NoError(t, err)
	more, _ := filepath.Glob("*.go")
	seen := 0
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_templ.go") || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range usedIDs.FindAllStringSubmatch(string(src), -1) {
			seen++
			if _, ok := en[m[1]]; !ok {
				t.Errorf("%s names message %q, which en.toml lacks", f, m[1])
			}
		}
	}
	require.Greater(t, seen, 80, "the scan finds the views' messages")
}
