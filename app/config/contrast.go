package config

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/image/colornames"
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
	if t.BrandColor == "" || !IsCSSColor(t.BrandColor) {
		return nil
	}
	brand, ok := opaqueRGB(t.BrandColor)
	if !ok {
		return nil
	}
	var out []string
	text := t.ButtonText
	if text == "" {
		text = "#fff" // next-auth's default, latchkey's too
	}
	if fg, ok := opaqueRGB(text); ok && IsCSSColor(text) {
		if r := contrast(fg, brand); r < minTextContrast {
			out = append(out, fmt.Sprintf("theme: button_text %q on brand_color %q has a contrast of %.1f:1; WCAG 2.1 AA needs %.1f:1 for the buttons' text", text, t.BrandColor, r, minTextContrast))
		}
	}
	for _, card := range []struct{ scheme, color string }{{SchemeLight, lightCard}, {SchemeDark, darkCard}} {
		if t.ColorScheme != "" && t.ColorScheme != SchemeAuto && t.ColorScheme != card.scheme {
			continue
		}
		bg, _ := opaqueRGB(card.color)
		if r := contrast(brand, bg); r < minTextContrast {
			out = append(out, fmt.Sprintf("theme: brand_color %q on the %s scheme's card (%s) has a contrast of %.1f:1; WCAG 2.1 AA needs %.1f:1 for links in that colour (set color_scheme to the scheme it suits)", t.BrandColor, card.scheme, card.color, r, minTextContrast))
		}
	}
	return out
}

// rgbFunc is rgb()/rgba() with three plain numbers (0-255) and an optional
// alpha, the forms IsCSSColor admits.
var rgbFunc = regexp.MustCompile(`^rgba?\(\s*([0-9.]+)(?:\s*,\s*|\s+)([0-9.]+)(?:\s*,\s*|\s+)([0-9.]+)\s*(?:[,/]\s*([0-9.]+%?))?\s*\)$`)

// opaqueRGB is an opaque colour's red, green and blue (0-1): hex, a CSS
// name, or rgb() with numbers; ok is false for anything else.
func opaqueRGB(s string) (rgb [3]float64, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(s, "#"):
		h := s[1:]
		if len(h) == 3 || len(h) == 4 { // #rgb(a) is #rrggbb(aa)
			var long strings.Builder
			for i := range len(h) {
				long.WriteByte(h[i])
				long.WriteByte(h[i])
			}
			h = long.String()
		}
		if len(h) == 8 {
			if h[6:] != "ff" {
				return rgb, false
			}
			h = h[:6]
		}
		if len(h) != 6 {
			return rgb, false
		}
		for i := range 3 {
			v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
			if err != nil {
				return rgb, false
			}
			rgb[i] = float64(v) / 255
		}
		return rgb, true
	case rgbFunc.MatchString(s):
		m := rgbFunc.FindStringSubmatch(s)
		if m[4] != "" && m[4] != "1" && m[4] != "100%" {
			return rgb, false
		}
		for i := range 3 {
			v, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil || v > 255 {
				return rgb, false
			}
			rgb[i] = v / 255
		}
		return rgb, true
	}
	if s == "rebeccapurple" { // CSS Color 4; not in SVG 1.1's list
		return [3]float64{0x66 / 255.0, 0x33 / 255.0, 0x99 / 255.0}, true
	}
	if c, found := colornames.Map[s]; found {
		return [3]float64{float64(c.R) / 255, float64(c.G) / 255, float64(c.B) / 255}, true
	}
	return rgb, false
}

// contrast is WCAG 2.1's contrast ratio of two sRGB colours (1 to 21).
func contrast(a, b [3]float64) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is WCAG 2.1's relative luminance.
func luminance(c [3]float64) float64 {
	lin := func(v float64) float64 {
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c[0]) + 0.7152*lin(c[1]) + 0.0722*lin(c[2])
}
