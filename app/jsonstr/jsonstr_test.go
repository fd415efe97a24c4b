package jsonstr_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/jsonstr"
)

// encoded is encoding/json's Encoder output for s, without its newline.
func encoded(t *testing.T, s string, escapeHTML bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	require.NoError(t, enc.Encode(s))
	return strings.TrimSuffix(b.String(), "\n")
}

// TestAppendMatchesEncodingJSON: every byte, every rune up to U+3000 and
// random mixes of the characters encoding/json treats specially, with HTML
// escaping on and off.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	pieces := []string{"a", "Zoë", " ", `"`, `\`, "<", ">", "&", "/", "\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t",
		"\u2028", "\u2029", "😀", "\xff", "\xc3", "\xe2\x80", "é", "\u00a0", "\ufffd", "'", "+"}
	for _, html := range []bool{true, false} {
		for c := 0; c < 256; c++ {
			s := string([]byte{byte(c)})
			require.Equal(t, encoded(t, s, html), string(jsonstr.Append(nil, s, html)), "byte %#x, html %v", c, html)
		}
		for c := rune(0); c < 0x3000; c++ {
			s := string(c)
			require.Equal(t, encoded(t, s, html), string(jsonstr.Append(nil, s, html)), "rune %U, html %v", c, html)
		}
		r := rand.New(rand.NewPCG(7, 8))
		for range 20000 {
			var b strings.Builder
			for range r.IntN(10) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			s := b.String()
			require.Equal(t, encoded(t, s, html), string(jsonstr.Append([]byte("x"), s, html))[1:], "%q, html %v", s, html)
		}
	}
}
