package views

import "strings"

// Theme is the config's theme as the pages use it (app/theme.go builds it
// from validated values). The brand colours are not here: they live in
// the theme stylesheet, since the pages' Content-Security-Policy allows no
// inline styles.
type Theme struct {
	// Stylesheet is the URL of the generated theme stylesheet
	// ({base}/theme.css), linked after style.css; "" without a theme.
	Stylesheet string
	// Logo is the URL of the image shown at the top of every page, or "".
	Logo string
	// ColorScheme is "light" or "dark" to force one, "" (or "auto") for
	// the browser's choice.
	ColorScheme string
}

// schemeClass is the <html> class that forces a colour scheme in
// static/style.css, or "".
func (t Theme) schemeClass() string {
	switch t.ColorScheme {
	case "light", "dark":
		return "scheme-" + t.ColorScheme
	}
	return ""
}

// metaScheme is the color-scheme meta tag's content.
func (t Theme) metaScheme() string {
	if c := t.schemeClass(); c != "" {
		return t.ColorScheme
	}
	return "light dark"
}

// Next-auth's sign-in e-mail colours when the theme sets none.
const (
	defaultBrandColor = "#346df1"
	defaultButtonText = "#fff"
)

// emailColor is c when it is made only of the characters a validated
// colour has (app/config.IsCSSColor), else def: a second guard, so that a
// value that skipped validation can never end a style attribute.
func emailColor(c, def string) string {
	if c == "" || strings.Trim(c, "#abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789(),.%/ ") != "" {
		return def
	}
	return c
}

// brand is the e-mail's button and link colour.
func (d SignInEmail) brand() string { return emailColor(d.BrandColor, defaultBrandColor) }

// buttonText is the colour of the e-mail button's text.
func (d SignInEmail) buttonText() string { return emailColor(d.ButtonText, defaultButtonText) }
