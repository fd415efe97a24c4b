package config

import (
	"fmt"

	"github.com/latchkey-auth/latchkey/app/config/colour"
)

// The cards the brand colour's links sit on (static/style.css --card and
// static/dark.css --card): WCAG contrast is measured against them.
const (
	lightCard = "#ffffff"
	darkCard  = "#1b1f27"
)

// minTextContrast is WCAG 2.1 AA's ratio for normal text (1.4.3).
const minTextContrast = 4.5

// themeContrastWarnings are check-config's warnings for theme colours that
// would fail WCAG 2.1 AA: the button text on the brand colour, and the brand
// colour of links and secondary buttons on the card of each colour scheme
// the theme shows. Colours are the operator's choice, so these warn rather
// than refuse; a colour whose value needs a browser to know (hsl(), a
// translucent one) is not measured.
func (c *Config) themeContrastWarnings() []string {
	t := c.Theme
	if t.BrandColor == "" || !colour.IsCSSColor(t.BrandColor) {
		return nil
	}
	brand, ok := colour.OpaqueRGB(t.BrandColor)
	if !ok {
		return nil
	}
	var out []string
	text := t.ButtonText
	if text == "" {
		text = "#fff" // next-auth's default, latchkey's too
	}
	if fg, ok := colour.OpaqueRGB(text); ok && colour.IsCSSColor(text) {
		if r := colour.Contrast(fg, brand); r < minTextContrast {
			out = append(out, fmt.Sprintf("theme: button_text %q on brand_color %q has a contrast of %.1f:1; WCAG 2.1 AA needs %.1f:1 for the buttons' text", text, t.BrandColor, r, minTextContrast))
		}
	}
	for _, card := range []struct{ scheme, color string }{{SchemeLight, lightCard}, {SchemeDark, darkCard}} {
		if t.ColorScheme != "" && t.ColorScheme != SchemeAuto && t.ColorScheme != card.scheme {
			continue
		}
		bg, _ := colour.OpaqueRGB(card.color)
		if r := colour.Contrast(brand, bg); r < minTextContrast {
			out = append(out, fmt.Sprintf("theme: brand_color %q on the %s scheme's card (%s) has a contrast of %.1f:1; WCAG 2.1 AA needs %.1f:1 for links in that colour (set color_scheme to the scheme it suits)", t.BrandColor, card.scheme, card.color, r, minTextContrast))
		}
	}
	return out
}
