package oauth

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBoundedProfile(t *testing.T) {
	good := Profile{ID: "42", Name: "Ada", Email: "ada@example.com", EmailVerified: true, Image: "https://img.example/a.png"}
	got, err := good.bounded()
	require.NoError(t, err)
	require.Equal(t, good, got, "an ordinary profile is kept as it is")

	got, err = Profile{ID: "1", Name: " A\x00d\u0085a\xff ", Email: "a\tb@example.com", EmailVerified: true, Image: "data:image/png;base64,AAAA"}.bounded()
	require.NoError(t, err)
	require.Equal(t, Profile{ID: "1", Name: "Ada"}, got)

	got, err = Profile{ID: "1", Name: strings.Repeat("é", 300), Email: strings.Repeat("a", 321), Image: "https://x/" + strings.Repeat("a", 2048)}.bounded()
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("é", 256), got.Name)
	require.Empty(t, got.Email)
	require.Empty(t, got.Image)

	for _, img := range []string{"javascript:alert(1)", "//host/a.png", "/a.png", "https:///a.png", "https://x/a\n.png"} {
		got, err = Profile{ID: "1", Image: img}.bounded()
		require.NoError(t, err)
		require.Empty(t, got.Image, img)
	}
	for _, id := range []string{"", "a\x00", "a\nb", "\xff", strings.Repeat("1", 1025)} {
		_, err = Profile{ID: id}.bounded()
		require.Error(t, err, "%q", id)
	}
}
