package app

import (
	"cmp"
	"strings"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/config/colour"
	"github.com/latchkey-auth/latchkey/views"
)

// theme is the config's theme (next-auth's `theme` option) made ready for
// the pages: the stylesheet at {base}/theme.css, built once here from the
// validated values, carries the brand colours, since the pages'
// Content-Security-Policy allows no inline styles; the logo's origin, when
// it is not the service's, is the one image source the policy adds.
type theme struct {
	page       views.Theme
	css        []byte
	brandColor string // for the sign-in e-mail; "" for its default
	buttonText string
	imgOrigin  string // the logo's origin when elsewhere, else ""
}

// buildTheme derives the theme from the config. Values that fail
// config's checks (a config that skipped Validate) are left out, so
// nothing unchecked reaches a stylesheet, an attribute or the CSP.
func buildTheme(t config.Theme, base config.Base) theme {
	var th theme
	var css strings.Builder
	css.WriteString("/* latchkey theme (config.yaml theme), after style.css and dark.css */\n")
	if colour.IsCSSColor(t.BrandColor) {
		th.brandColor = t.BrandColor
	}
	if colour.IsCSSColor(t.ButtonText) {
		th.buttonText = t.ButtonText
	}
	if th.brandColor != "" || th.buttonText != "" {
		// Linked after dark.css, so the brand holds in the dark scheme
		// too, as in next-auth.
		css.WriteString(":root {\n")
		if th.brandColor != "" {
			css.WriteString("  --accent: " + th.brandColor + ";\n")
		}
		// next-auth's buttonText defaults to white whatever the scheme;
		// dark.css's own dark text would be unreadable on most brands.
		css.WriteString("  --accent-text: " + cmp.Or(th.buttonText, "#fff") + ";\n")
		css.WriteString("}\n")
		th.page.Stylesheet = base.Path + "/theme.css" // linked only when it says something
	}
	th.css = []byte(css.String())
	switch t.ColorScheme {
	case config.SchemeLight, config.SchemeDark:
		th.page.ColorScheme = t.ColorScheme
	}
	if config.IsLogoURL(t.Logo) {
		th.page.Logo = t.Logo
		if o, ok := cspOrigin(t.Logo); ok && o != base.Origin {
			th.imgOrigin = o
		}
	}
	return th
}
