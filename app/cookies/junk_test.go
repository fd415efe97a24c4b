package cookies_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// junkName is the session cookie the junk requests below aim at.
const junkName = "next-auth.session-token"

// junkRequest carries about 60 KB of cookies that all look like session
// chunks: every numeric suffix from 0 up (far past what reading accepts),
// non-canonical spellings of real indexes, arbitrary suffixes and repeats;
// the kind of header anyone can send to make a server clear "every chunk".
func junkRequest(tb testing.TB) *http.Request {
	tb.Helper()
	var b strings.Builder
	add := func(suffix string) {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(junkName + suffix + "=x")
	}
	add("")
	for i := 0; b.Len() < 60_000; i++ {
		add("." + strconv.Itoa(i))
		switch i % 7 {
		case 1:
			add(".0" + strconv.Itoa(i%65)) // leading zero: not a name we write
		case 3:
			add(".x" + strconv.Itoa(i)) // arbitrary suffix
		case 5:
			add("." + strconv.Itoa(i%65)) // a repeat of a real chunk name
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", b.String())
	require.Greater(tb, len(r.Cookies()), 1500, "the header parses into many cookies")
	return r
}

// maxChunkLines is what clearing may answer at most: the plain name plus the
// 65 chunk names reading considers (name.0 ... name.64), each once.
const maxChunkLines = 1 + 65

// Issue 9, finding 4: clearing the session chunks of a junk request answered
// a Set-Cookie per junk cookie (about 2,000 lines) and spent CPU quadratic in
// their number. Only the names reading would use are cleared, each once.
func TestChunkJunkIsBounded(t *testing.T) {
	w := cookies.Writer{}
	for name, write := range map[string]func(http.ResponseWriter, *http.Request){
		"clear": func(rw http.ResponseWriter, r *http.Request) { w.ClearChunked(rw, r, junkName) },
		"set": func(rw http.ResponseWriter, r *http.Request) {
			w.SetChunked(rw, r, junkName, token(3*cookies.ChunkSize), time.Now().Add(time.Hour))
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			write(rec, junkRequest(t))
			lines := rec.Header().Values("Set-Cookie")
			require.LessOrEqual(t, len(lines), maxChunkLines)

			seen := map[string]bool{}
			for _, l := range lines {
				c, err := http.ParseSetCookie(l)
				require.NoError(t, err)
				require.False(t, seen[c.Name], "one Set-Cookie per name: %s", c.Name)
				seen[c.Name] = true
			}
			// Every name reading would use is cleared (or rewritten).
			require.True(t, seen[junkName])
			for i := range 65 {
				require.True(t, seen[junkName+"."+strconv.Itoa(i)], "chunk %d", i)
			}
		})
	}
}

// BenchmarkChunkJunk is the cost of answering one junk request (finding 4).
func BenchmarkChunkJunk(b *testing.B) {
	w := cookies.Writer{}
	r := junkRequest(b)
	b.ResetTimer()
	for b.Loop() {
		w.ClearChunked(httptest.NewRecorder(), r, junkName)
	}
}
