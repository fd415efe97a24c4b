package config

import (
	"regexp"
	"strings"

	"github.com/latchkey-auth/latchkey/app/config/colour"
)

// Theme is next-auth's `theme` option for the built-in pages and the
// sign-in e-mail: ColorScheme is "auto" (the browser's choice, the
// default), "light" or "dark"; BrandColor colours buttons and links;
// Logo is shown at the top of every page; ButtonText is the colour of the
// text on brand-coloured buttons. Values reach a stylesheet and HTML
// attributes, so Validate admits only plain colours and URLs.
type Theme struct {
	ColorScheme string `yaml:"color_scheme"`
	BrandColor  string `yaml:"brand_color"`
	Logo        string `yaml:"logo"`
	ButtonText  string `yaml:"button_text"`
}

// Colour schemes.
const (
	SchemeAuto  = "auto"
	SchemeLight = "light"
	SchemeDark  = "dark"
)

// validateTheme reports a theme value that is not what its key expects.
func (c *Config) validateTheme(add func(string, ...any)) {
	t := c.Theme
	switch t.ColorScheme {
	case "", SchemeAuto, SchemeLight, SchemeDark:
	default:
		add("theme.color_scheme: %q must be auto, light or dark", t.ColorScheme)
	}
	for key, v := range map[string]string{"brand_color": t.BrandColor, "button_text": t.ButtonText} {
		if v != "" && !colour.IsCSSColor(v) {
			add("theme.%s: %q is not a CSS colour (#rgb, #rrggbb, #rrggbbaa, rgb()/rgba()/hsl()/hsla() with numbers, or a named colour)", key, v)
		}
	}
	if t.Logo != "" && !IsLogoURL(t.Logo) {
		add("theme.logo: %q must be an https URL or an absolute path on the service's origin (letters, digits and - . _ ~ / %% only)", t.Logo)
	}
}

// logoPath is an absolute path of plain characters: nothing that could
// end an attribute or a url(), start a scheme or a query.
var logoPath = regexp.MustCompile(`^/[A-Za-z0-9._~/%-]*$`)

// IsLogoURL reports whether s is an https URL with a plain host and path,
// or an absolute path on the service's origin (not //host, no backslash).
func IsLogoURL(s string) bool {
	if strings.HasPrefix(s, "/") {
		return !strings.HasPrefix(s, "//") && logoPath.MatchString(s)
	}
	return logoHTTPS.MatchString(s)
}

// logoHTTPS is an https URL with a lower-case DNS name, an optional port and
// a plain path: no user info, query or fragment.
var logoHTTPS = regexp.MustCompile(`^https://[a-z0-9-]+(\.[a-z0-9-]+)*(:[0-9]{1,5})?(/[A-Za-z0-9._~/%-]*)?$`)
