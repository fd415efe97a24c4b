package i18n_test

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/views"
)

func shipped(t *testing.T) *i18n.Catalog {
	t.Helper()
	c, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	return c
}

func TestAcceptLanguage(t *testing.T) {
	c := shipped(t)
	for header, want := range map[string]string{
		"":                                   "en",
		"de":                                 "de",
		"de-DE,de;q=0.9,en;q=0.8":            "de",
		"fr;q=0.5, ja;q=0.9":                 "ja", // quality values, not order
		"en;q=0.1, ko":                       "ko",
		"pt-PT":                              "pt-BR", // region fallback
		"pt":                                 "pt-BR",
		"es-419":                             "es",
		"ar-EG":                              "ar",
		"zh":                                 "zh-CN",
		"zh-Hans-CN":                         "zh-CN",
		"zh-TW":                              "en", // Traditional: not the Simplified catalogue
		"zh-TW, zh;q=0.8":                    "zh-CN",
		"zh-Hant":                            "en",
		"xx":                                 "en", // unknown: the default
		"tlh, x-klingon":                     "en",
		"sv, nb;q=0.9":                       "en",
		"*":                                  "en",
		"de;q=nonsense":                      "en", // malformed: ignored whole
		"<script>alert(1)</script>":          "en",
		"fr\x00":                             "en",
		strings.Repeat("de-DE-", 2000):       "en",
		strings.Repeat("fr;q=0.5, ", 1024):   "en", // 10 kB: ignored unparsed
		"de," + strings.Repeat(" ", 10*1024): "en",
	} {
		require.Equal(t, want, c.Accept(header).Tag(), "Accept-Language %.40q", header)
	}
}

// BenchmarkAcceptLanguage: a browser's header, a hostile one refused by its
// length, and the worst that is parsed (just under 1 KiB of tags).
func BenchmarkAcceptLanguage(b *testing.B) {
	c, err := i18n.Load(views.Locales(), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	for name, h := range map[string]string{
		"browser":      "de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7",
		"hostile 10kB": strings.Repeat("zh-Hant-TW-u-ca-chinese;q=0.1,", 350),
		"worst 1KiB":   strings.Repeat("zh-Hant-TW,", 93),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Accept(h)
			}
		})
	}
}

func TestLangParameter(t *testing.T) {
	c := shipped(t)
	for param, want := range map[string]string{
		"ar":    "ar",
		"pt-br": "pt-BR", // any case
		"pt-BR": "pt-BR",
		"de-AT": "de",
		"ja-JP": "ja",
	} {
		l, ok := c.Param(param)
		require.True(t, ok, param)
		require.Equal(t, want, l.Tag(), param)
	}
	for _, bad := range []string{"", "xx", "en-", "../../etc/passwd", "<b>", "de de", strings.Repeat("a", 36), "de;q=1", "sv"} {
		_, ok := c.Param(bad)
		require.False(t, ok, "lang=%q", bad)
	}
	// That the parameter beats Accept-Language (and a bad one leaves it to
	// the header) is app.langOf's: TestPageLanguageNegotiation.
}

func TestConfiguredLanguages(t *testing.T) {
	c, err := i18n.Load(views.Locales(), "de", []string{"fr", "de"})
	require.NoError(t, err)
	require.Equal(t, []string{"de", "fr"}, c.Languages(), "the default first")
	require.Equal(t, "de", c.Accept("en-US,en;q=0.9").Tag(), "English is not offered: the default")
	require.Equal(t, "fr", c.Accept("fr-CH").Tag())
	_, ok := c.Param("ja")
	require.False(t, ok, "a shipped language outside the allow-list is not offered")

	c, err = i18n.Load(views.Locales(), "", []string{"ja", "ko"})
	require.NoError(t, err)
	require.Equal(t, "ja", c.Default().Tag(), "no default: the first language offered")

	_, err = i18n.Load(views.Locales(), "", []string{"en", "xx"})
	require.ErrorContains(t, err, `i18n.languages: "xx" has no catalogue`)
	_, err = i18n.Load(views.Locales(), "ja", []string{"en", "de"})
	require.ErrorContains(t, err, `i18n.default: "ja" is not one of the languages offered`)
}

// TestBrokenCatalogue: a catalogue that does not parse, is named by no
// tag, or has no direction stops the start.
func TestBrokenCatalogue(t *testing.T) {
	en := mustRead(t, "en.toml")
	for name, files := range map[string]fstest.MapFS{
		"syntax":       {"en.toml": {Data: en}, "de.toml": {Data: []byte(`SignInHeading = "Anmelden`)}},
		"file name":    {"en.toml": {Data: en}, "german.toml": {Data: []byte(`Direction = "ltr"`)}},
		"direction":    {"en.toml": {Data: en}, "de.toml": {Data: []byte(`Direction = "down"`)}},
		"no source":    {"de.toml": {Data: []byte(`Direction = "ltr"`)}},
		"nested table": {"en.toml": {Data: en}, "de.toml": {Data: []byte("Direction = \"ltr\"\n[SignIn]\nHeading = 1")}},
	} {
		_, err := i18n.Load(files, "", nil)
		require.Error(t, err, name)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	buf, err := fs.ReadFile(views.Locales(), name)
	require.NoError(t, err)
	return buf
}

// TestFallbackToEnglish: a message a catalogue lacks (an operator's own
// language file, behind a new release) is shown in English, not as its id.
func TestFallbackToEnglish(t *testing.T) {
	c, err := i18n.Load(fstest.MapFS{"en.toml": {Data: mustRead(t, "en.toml")}, "de.toml": {Data: []byte("Direction = \"ltr\"\nSignOutButton = \"Abmelden\"")}}, "de", nil)
	require.NoError(t, err)
	require.Equal(t, "Abmelden", c.Default().T("SignOutButton"))
	require.Equal(t, "Sign in", c.Default().T("SignInHeading"))
}

func TestMessages(t *testing.T) {
	c := shipped(t)
	en := c.Default()
	require.Equal(t, "Sign in with GitHub", en.T("SignInWith", "Provider", "GitHub"))
	require.Equal(t, "NoSuchMessage", en.T("NoSuchMessage"), "a missing message shows its id")
	ja, _ := c.Param("ja")
	before, after := ja.Split("SignedInAs", "Email", "Host", "x")
	require.Equal(t, "", before, "Japanese puts the address first")
	require.NotEmpty(t, after)
	before, _ = en.Split("SignedInAs", "Email")
	require.Equal(t, "Signed in as ", before)
	var none *i18n.Lang
	require.Equal(t, "SignInHeading", none.T("SignInHeading"))
	require.Equal(t, "ltr", none.Dir())
}

// FirstOf is ui_locales: the first offered tag of the list, in its order,
// not the best by x/text's rating.
func TestFirstOf(t *testing.T) {
	c := shipped(t)
	for list, want := range map[string]string{
		"sw-KE de fr":                     "de",
		"fr-CA":                           "fr",
		"  ja  ko ":                       "ja",
		"pt-PT en":                        "pt-BR",
		"":                                "",
		"sw x-bad":                        "",
		strings.Repeat("sw ", 400) + "de": "",
	} {
		l, ok := c.FirstOf(list)
		if want == "" {
			require.False(t, ok, list)
			continue
		}
		require.True(t, ok, list)
		require.Equal(t, want, l.Tag(), list)
	}
}

// TestUnofferedLanguageIsNotEnglish: x/text rates some languages latchkey
// does not offer a High match for English (a second language CLDR supposes
// their speakers read). Asked for, they are what they are, not offered: the
// configured default, or the request's next preference.
func TestUnofferedLanguageIsNotEnglish(t *testing.T) {
	c, err := i18n.Load(views.Locales(), "fr", nil)
	require.NoError(t, err)
	for header, want := range map[string]string{
		"sw":                      "fr",
		"tlh":                     "fr",
		"yo-NG":                   "fr",
		"gsw":                     "fr", // Swiss German: CLDR's High for de
		"sw, de;q=0.8":            "de", // the next preference, before the default
		"sw-KE, en;q=0.5":         "en",
		"tlh, ja;q=0.9, en;q=0.5": "ja",
		"cmn":                     "zh-CN", // Mandarin is zh: x/text's Exact
		"arb":                     "ar",
		"en-GB":                   "en",
	} {
		require.Equal(t, want, c.Accept(header).Tag(), "Accept-Language %q", header)
	}
	for _, s := range []string{"sw", "tlh", "zu", "gsw", "wo"} {
		_, ok := c.Param(s)
		require.False(t, ok, "lang=%s", s)
	}
	l, ok := c.Param("cmn")
	require.True(t, ok)
	require.Equal(t, "zh-CN", l.Tag())
	l, ok = c.FirstOf("cmn-CN en")
	require.True(t, ok)
	require.Equal(t, "zh-CN", l.Tag(), "ui_locales: Mandarin is zh-CN")
}
