package cookies_test

import (
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// TestSealedCodecs: the first secret seals, every listed secret opens, and
// a different purpose (another cookie) never opens the value.
func TestSealedCodecs(t *testing.T) {
	const a, b = "secret-A-0123456789abcdef0123456789", "secret-B-0123456789abcdef0123456789"
	codecs := func(purpose string, secrets ...string) []securecookie.Codec {
		c, err := cookies.SealedCodecs(secrets, purpose, time.Hour)
		require.NoError(t, err)
		return c
	}
	sealed, err := securecookie.EncodeMulti("c", map[string]string{"v": "1"}, codecs("p", a)...)
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, securecookie.DecodeMulti("c", sealed, &got, codecs("p", b, a)...), "an older secret still opens")
	require.Equal(t, "1", got["v"])
	require.Error(t, securecookie.DecodeMulti("c", sealed, &got, codecs("p", b)...), "a retired secret does not")
	require.Error(t, securecookie.DecodeMulti("c", sealed, &got, codecs("other", a)...), "another purpose does not")
	require.Error(t, securecookie.DecodeMulti("d", sealed, &got, codecs("p", a)...), "another cookie name does not")

	newer, err := securecookie.EncodeMulti("c", map[string]string{"v": "2"}, codecs("p", b, a)...)
	require.NoError(t, err)
	require.Error(t, securecookie.DecodeMulti("c", newer, &got, codecs("p", a)...), "the first secret seals")
	_, err = cookies.SealedCodecs(nil, "p", time.Hour)
	require.Error(t, err)
}
