package cookies_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// A later Set or Clear of the same name replaces the earlier Set-Cookie on
// the same response; other cookies are untouched.
func TestSetReplacesSameNameOnOneResponse(t *testing.T) {
	w := httptest.NewRecorder()
	cw := cookies.Writer{}
	cw.Set(w, "a", "first", time.Time{}, 0)
	cw.Set(w, "ab", "other", time.Time{}, 0)
	cw.Set(w, "a", "second", time.Time{}, 0)
	cw.Clear(w, "ab")
	lines := w.Header().Values("Set-Cookie")
	require.Len(t, lines, 2, strings.Join(lines, "\n"))
	require.True(t, strings.HasPrefix(lines[0], "a=second;"), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "ab=;"), lines[1])
}
