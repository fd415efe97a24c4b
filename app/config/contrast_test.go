package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestContrastRatio(t *testing.T) {
	ratio := func(a, b string) float64 {
		ca, ok := opaqueRGB(a)
		require.True(t, ok, a)
		cb, ok := opaqueRGB(b)
		require.True(t, ok, b)
		return contrast(ca, cb)
	}
	// WCAG's own reference points.
	require.InDelta(t, 21, ratio("#000", "#fff"), 0.01)
	require.InDelta(t, 1, ratio("white", "#FFFFFF"), 0.01)
	require.InDelta(t, 4.54, ratio("#767676", "#fff"), 0.01, "the lightest grey that passes on white")
	require.InDelta(t, 4.99, ratio("#0a7f5a", "#ffffff"), 0.05, "the docs' brand colour")
	require.InDelta(t, ratio("rgb(10, 127, 90)", "#fff"), ratio("#0a7f5a", "#fff"), 0.001)
	require.InDelta(t, ratio("rebeccapurple", "#fff"), ratio("#663399", "#fff"), 0.001)
	require.InDelta(t, ratio("#0a7f5aff", "#fff"), ratio("#0a7f5a", "#fff"), 0.001)

	for _, unknown := range []string{"hsl(120, 50%, 50%)", "#0a7f5a80", "rgba(0,0,0,0.5)", "nocolor", "#12"} {
		_, ok := opaqueRGB(unknown)
		require.False(t, ok, unknown)
	}
}

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
