package i18n_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/i18n"
)

// catalogue is a source catalogue plus a German one, both minimal.
func catalogue(en, de string) fstest.MapFS {
	return fstest.MapFS{
		"en.toml": {Data: []byte("LanguageName = \"English\"\nDirection = \"ltr\"\n" + en)},
		"de.toml": {Data: []byte("LanguageName = \"Deutsch\"\nDirection = \"ltr\"\n" + de)},
	}
}

// Messages are rendered at load and their placeholders filled per call:
// in any order and number, a value that is missing shows as go-i18n's
// templates show it, and a value is never read as a placeholder.
func TestPlaceholdersFilled(t *testing.T) {
	c, err := i18n.Load(catalogue(
		"Both = \"{{.A}} then {{.B}}\"\nTwice = \"{{.A}}{{.A}}\"\nPlain = \"no placeholder\"\nTrimmed = \"x {{- .B }}\"\n",
		"Both = \"{{.B}} vor {{.A}}\"\n"), "de", nil)
	require.NoError(t, err)
	de := c.Default()
	require.Equal(t, "2 vor 1", de.T("Both", "A", "1", "B", "2"), "the language's own order")
	require.Equal(t, "11", de.T("Twice", "A", "1"), "English where German lacks it")
	require.Equal(t, "no placeholder", de.T("Plain", "A", "unused"))
	require.Equal(t, "x2", de.T("Trimmed", "B", "2"))
	require.Equal(t, "<no value> vor 1", de.T("Both", "A", "1"), "a value the caller did not give")
	require.Equal(t, "{{.B}} vor \x00", de.T("Both", "A", "\x00", "B", "{{.B}}"), "values are text, not placeholders or marks")
	before, after := de.Split("Both", "A", "B", "<b>")
	require.Equal(t, []string{"<b> vor ", ""}, []string{before, after})
}

// A catalogue whose template reads anything but a plain placeholder, or
// that holds a NUL byte, stops the start instead of showing garbled text.
func TestUnrenderableMessages(t *testing.T) {
	for name, de := range map[string]string{
		"unnamed field": `Greeting = "Hallo {{$.Whom}}"`, // read only through $: no placeholder name
		"NUL":           `Greeting = "Hallo\u0000"`,
		"not a map":     `Greeting = "Hallo {{.Who.Name}}"`,
	} {
		_, err := i18n.Load(catalogue(`Greeting = "Hello {{.Who}}"`, de), "", nil)
		require.Error(t, err, name)
		require.ErrorContains(t, err, "de.toml: Greeting", name)
	}
}

// LoadedFor tells a catalogue loaded for other i18n settings apart, which
// app.New refuses as Options.Langs; nil and empty language lists alike.
func TestLoadedFor(t *testing.T) {
	c, err := i18n.Load(catalogue("", ""), "", []string{})
	require.NoError(t, err)
	require.True(t, c.LoadedFor("", nil))
	require.True(t, c.LoadedFor("", []string{}))
	require.False(t, c.LoadedFor("de", nil))
	require.False(t, c.LoadedFor("", []string{"de"}))
}
