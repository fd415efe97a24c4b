package views

import "strings"

// Theme is the config's theme as the pages use it (app/theme.go builds it
// from validated values). The brand colours are not here: they live in
// the theme stylesheet, since the pages' Content-Security-Policy allows no
// inline styles.
type Theme struct {
	// Stylesheet is the URL of the generated theme stylesheet
	// ({base}/theme.css), linked last; "" without theme colours.
	Stylesheet string
	// Logo is the URL of the image shown at the top of every page, or "".
	Logo string
	// ColorScheme is "light" or "dark" to force one, "" (or "auto") for
	// the browser's choice.
	ColorScheme string
}

// darkMedia is the media attribute of static/dark.css's link: the
// browser's preference, or always for a forced dark scheme ("" for a
// forced light one, which does not link it).
func (t Theme) darkMedia() string {
	switch t.ColorScheme {
	case "light":
		return ""
	case "dark":
		return "all"
	}
	return "(prefers-color-scheme: dark)"
}

// metaScheme is the color-scheme meta tag's content.
func (t Theme) metaScheme() string {
	if t.ColorScheme == "light" || t.ColorScheme == "dark" {
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
// colour has (app/config/colour.IsCSSColor), else def: a second guard, so that a
// value that skipped validation can never end a style attribute.
func emailColor(c, def string) string {
	if c == "" || strings.Trim(c, "#abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789(),.%/ ") != "" {
		return def
	}
	return c
}

// EmailColors are the theme's colours of an e-mail's button and link
// (next-auth's brandColor and buttonText); "" for the defaults.
type EmailColors struct {
	BrandColor string
	ButtonText string
}

// brand is the e-mail's button and link colour.
func (c EmailColors) brand() string { return emailColor(c.BrandColor, defaultBrandColor) }

// buttonText is the colour of the e-mail button's text.
func (c EmailColors) buttonText() string { return emailColor(c.ButtonText, defaultButtonText) }
