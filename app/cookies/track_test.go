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

// serve runs fn as a handler behind cookies.Track, seeing the response
// through an unwrapping wrapper as echo's handlers do, and returns the
// response's Set-Cookie lines.
func serve(t *testing.T, fn func(rw http.ResponseWriter)) []string {
	t.Helper()
	rec := httptest.NewRecorder()
	cookies.Track(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		fn(wrapper{rw})
	})).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return rec.Header().Values("Set-Cookie")
}

// wrapper stands for a middleware's ResponseWriter (echo.Response).
type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Issue 9, finding 4: replacing an earlier Set-Cookie of the same name used
// to rebuild the whole list of lines, so setting N cookies on one response
// cost O(N²). Under Track, replacing one costs the same (in allocations, a
// proxy for work that does not depend on the clock) whether 8 or 4,096 other
// cookies are on the response, and the invariant holds: one line per name,
// in the order the names were first set.
func TestSetIsConstantTimePerCookie(t *testing.T) {
	w := cookies.Writer{}
	replace := func(n int) (allocs float64, lines []string) {
		names := make([]string, n)
		for i := range names {
			names[i] = "c" + strconv.Itoa(i)
		}
		lines = serve(t, func(rw http.ResponseWriter) {
			for _, name := range names {
				w.Set(rw, name, "v", time.Time{}, 0)
			}
			k := 0
			allocs = testing.AllocsPerRun(200, func() {
				w.Set(rw, names[k%n], "again", time.Time{}, 0)
				k++
			})
		})
		return allocs, lines
	}
	few, _ := replace(8)
	many, lines := replace(4096)
	require.Equal(t, few, many, "allocations to replace one cookie among 8 and among 4,096")
	require.Len(t, lines, 4096)
	for i, l := range lines {
		require.True(t, strings.HasPrefix(l, "c"+strconv.Itoa(i)+"="), "line %d: %s", i, l)
	}
}

// The index stays right when other code edits the Set-Cookie lines behind
// the writer's back: a direct http.SetCookie, a Del, an in-place edit.
func TestTrackSurvivesOtherWriters(t *testing.T) {
	w := cookies.Writer{}
	lines := serve(t, func(rw http.ResponseWriter) {
		w.Set(rw, "a", "1", time.Time{}, 0)
		http.SetCookie(rw, &http.Cookie{Name: "b", Value: "direct"})
		w.Set(rw, "b", "2", time.Time{}, 0)
		w.Set(rw, "a", "3", time.Time{}, 0)
		rw.Header().Del("Set-Cookie")
		w.Set(rw, "c", "4", time.Time{}, 0)
		w.Set(rw, "a", "5", time.Time{}, 0)
		rw.Header()["Set-Cookie"][0] = "d=edited"
		w.Set(rw, "c", "6", time.Time{}, 0)
		w.Set(rw, "d", "7", time.Time{}, 0)
		w.Clear(rw, "a")
	})
	var got []string
	for _, l := range lines {
		got = append(got, strings.SplitN(l, ";", 2)[0])
	}
	require.Equal(t, []string{"d=7", "a=", "c=6"}, got)
}

// A Tracker Reset onto a new response (as a pool hands it out again)
// remembers nothing of the previous one.
func TestTrackerReset(t *testing.T) {
	w := cookies.Writer{}
	var tr cookies.Tracker
	first := httptest.NewRecorder()
	tr.Reset(first)
	for i := range 20 {
		w.Set(&tr, "c"+strconv.Itoa(i), "v", time.Time{}, 0)
	}
	w.Set(&tr, "c3", "again", time.Time{}, 0)
	require.Len(t, first.Header()["Set-Cookie"], 20)

	second := httptest.NewRecorder()
	tr.Reset(second)
	for i := range 10 {
		w.Set(&tr, "d"+strconv.Itoa(i), "v", time.Time{}, 0)
	}
	w.Set(&tr, "c3", "new", time.Time{}, 0)
	w.Set(&tr, "d9", "again", time.Time{}, 0)
	lines := second.Header()["Set-Cookie"]
	require.Len(t, lines, 11)
	require.True(t, strings.HasPrefix(lines[9], "d9=again;"), lines[9])
	require.True(t, strings.HasPrefix(lines[10], "c3=new;"), lines[10])
	require.Len(t, first.Header()["Set-Cookie"], 20, "the first response is untouched")
}
