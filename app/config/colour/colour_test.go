package colour

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestContrastRatio(t *testing.T) {
	ratio := func(a, b string) float64 {
		ca, ok := OpaqueRGB(a)
		require.True(t, ok, a)
		cb, ok := OpaqueRGB(b)
		require.True(t, ok, b)
		return Contrast(ca, cb)
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
		_, ok := OpaqueRGB(unknown)
		require.False(t, ok, unknown)
	}
}

// IsCSSColor admits plain colours only: nothing that could end a
// declaration, nest a function or reach var().
func TestIsCSSColor(t *testing.T) {
	for _, ok := range []string{"#fff", "#0a7f5a", "#0a7f5a80", "rgb(10, 127, 90)", "rgba(0 0 0 / 50%)", "hsl(120deg, 50%, 20%)", "RebeccaPurple", "white"} {
		require.True(t, IsCSSColor(ok), ok)
	}
	for _, bad := range []string{"", "#12", "red;}</style>", "var(--x)", "rgb(calc(1), 2, 3)", "url(x)", "nocolor", " #fff"} {
		require.False(t, IsCSSColor(bad), bad)
	}
}
