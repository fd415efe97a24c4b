package nextauth

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/signin"
)

// encoded is what c.JSON writes for v: encoding/json's Encoder (HTML
// escaping on) with its trailing newline.
func encoded(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.NewEncoder(&b).Encode(v))
	return b.String()
}

// randomString mixes the characters encoding/json treats specially with
// plain text, multi-byte runes and broken UTF-8.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Zoë", " ", `"`, `\`, "<", ">", "&", "/", "\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t",
		"\u2028", "\u2029", "😀", "\xff", "\xc3", "\xe2\x80", "é", "\u00a0", "\ufffd", "'", "+"}
	var b strings.Builder
	for range r.IntN(10) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestAppendSessionMatchesEncodingJSON(t *testing.T) {
	// A field added to the session object must be added to appendSession.
	require.Equal(t, 3, reflect.TypeFor[signin.SessionObject]().NumField(), "update appendSession")
	require.Equal(t, 4, reflect.TypeFor[signin.SessionUser]().NumField(), "update appendSession")
	r := rand.New(rand.NewPCG(9, 10))
	maybe := func() *string {
		if r.IntN(3) == 0 {
			return nil
		}
		s := randomString(r)
		return &s
	}
	for range 5000 {
		obj := signin.SessionObject{
			User:    signin.SessionUser{Name: maybe(), Email: maybe(), Image: maybe()},
			Expires: randomString(r),
		}
		if r.IntN(2) == 0 {
			obj.User.ID = randomString(r)
		}
		if r.IntN(3) == 0 {
			obj.Error = randomString(r)
		}
		require.Equal(t, encoded(t, obj), string(appendSession(nil, obj)))
		require.True(t, utf8.Valid(appendSession(nil, obj)))
	}
	for range 1000 {
		tok := randomString(r)
		require.Equal(t, encoded(t, map[string]string{"csrfToken": tok}), string(appendCSRF(nil, tok)))
	}
}

// Writing the session object allocates nothing once the pool is warm.
func TestAppendSessionDoesNotAllocate(t *testing.T) {
	name := "Zoë <z@example.com>"
	obj := signin.SessionObject{User: signin.SessionUser{Name: &name}, Expires: "2030-01-02T03:04:05.000Z"}
	buf := make([]byte, 0, 512)
	require.Zero(t, testing.AllocsPerRun(100, func() { buf = appendSession(buf[:0], obj) }))
}
