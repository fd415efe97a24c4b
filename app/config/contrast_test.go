package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestThemeContrastWarnings(t *testing.T) {
	warn := func(th Theme) []string {
		c := Defaults()
		c.Theme = th
		return c.themeContrastWarnings()
	}
	require.Empty(t, warn(Theme{}), "no brand colour: latchkey's own, checked by the a11y suite")
	require.Empty(t, warn(Theme{ColorScheme: SchemeLight, BrandColor: "#0a7f5a", ButtonText: "#ffffff"}), "the docs' example")
	w := warn(Theme{ColorScheme: SchemeLight, BrandColor: "gold"})
	require.Len(t, w, 2, "white on gold, gold on white")
	require.Contains(t, w[0], `button_text "#fff" on brand_color "gold" has a contrast of 1.4:1`)
	require.Contains(t, w[1], "light scheme's card")
	w = warn(Theme{BrandColor: "#0a7f5a"})
	require.Len(t, w, 1, "auto shows both schemes: too dark for the dark card")
	require.Contains(t, w[0], "dark scheme's card (#1b1f27)")
	require.Empty(t, warn(Theme{BrandColor: "hsl(120, 50%, 20%)"}), "not measured")
	require.Empty(t, warn(Theme{BrandColor: "red;}</style>"}), "refused by Validate, not measured")
}
