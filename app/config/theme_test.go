package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// The theme is read from config.yaml under next-auth's names, snake_cased.
func TestThemeFromYAML(t *testing.T) {
	cfg, err := config.Load([]byte("secret: 0123456789abcdef0123456789abcdef\ntheme:\n  color_scheme: dark\n  brand_color: \"#0a7\"\n  logo: https://cdn.example.com/logo.svg\n  button_text: white\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, config.Theme{ColorScheme: "dark", BrandColor: "#0a7", Logo: "https://cdn.example.com/logo.svg", ButtonText: "white"}, cfg.Theme)
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err)
}

// Plain colours and logo URLs pass; anything that could leave a CSS value
// or an HTML attribute, run script or pull in another resource is a config
// error naming the key.
func TestThemeValidation(t *testing.T) {
	for _, c := range []string{"#abc", "#abcd", "#A1B2C3", "#a1b2c3d4", "rgb(10, 20, 30)", "rgba(10,20,30,0.5)",
		"rgb(10 20 30 / 50%)", "hsl(210deg 50% 40%)", "hsla(210, 50%, 40%, .5)", "RebeccaPurple", "white"} {
		t.Run("ok "+c, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Theme = config.Theme{BrandColor: c, ButtonText: c}
			_, err := cfg.Validate(catalogue)
			require.NoError(t, err)
		})
	}
	for _, c := range []string{"#abcde", "red;", "red; background: url(https://evil.example/x)", "</style><script>alert(1)</script>",
		`#fff" onload="x`, "var(--x)", "rgb(calc(1), 2, 3)", "expression(alert(1))", "notacolour", "rgb(1,2)", "red\n}", "url(x)"} {
		t.Run("bad colour "+c, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Theme = config.Theme{BrandColor: c}
			_, err := cfg.Validate(catalogue)
			requireProblem(t, problems(t, err), "theme.brand_color", "not a CSS colour")
			cfg.Theme = config.Theme{ButtonText: c}
			_, err = cfg.Validate(catalogue)
			requireProblem(t, problems(t, err), "theme.button_text")
		})
	}
	for _, l := range []string{"https://cdn.example.com/brand/logo.svg", "https://cdn.example.com:8443/l%20ogo.png", "/api/auth/static/logo.svg", "/logo.png"} {
		t.Run("ok logo "+l, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Theme = config.Theme{Logo: l}
			_, err := cfg.Validate(catalogue)
			require.NoError(t, err)
		})
	}
	for _, l := range []string{"http://cdn.example.com/logo.svg", "javascript:alert(1)", "data:image/svg+xml,<svg/>", "//evil.example/logo.svg",
		`/logo.svg" onerror="alert(1)`, "/logo.svg';x", "https://user:pw@cdn.example.com/l.png", "https://cdn.example.com/l.png?a=1",
		`https://cdn.example.com/l.png");x`, `\\evil\logo`, "logo.svg", "https://cdn.example.com/</style>", "https://cdn.example.com;/x"} {
		t.Run("bad logo "+l, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Theme = config.Theme{Logo: l}
			_, err := cfg.Validate(catalogue)
			requireProblem(t, problems(t, err), "theme.logo", "https URL or an absolute path")
		})
	}
	cfg := config.Defaults()
	cfg.Theme = config.Theme{ColorScheme: "sepia"}
	_, err := cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "theme.color_scheme", "auto, light or dark")
}
