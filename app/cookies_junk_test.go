package app_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Issue 9, finding 4, over HTTP: a 60 KB Cookie header of look-alike session
// chunks gets the session cleared with at most one Set-Cookie per name
// reading would use (the name and name.0 ... name.64), not one per junk cookie.
func TestJunkSessionChunksOverHTTP(t *testing.T) {
	const name = "next-auth.session-token"
	var b strings.Builder
	b.WriteString(name + "=x")
	for i := 0; b.Len() < 60_000; i++ {
		b.WriteString("; " + name + "." + strconv.Itoa(i) + "=x; " + name + ".j" + strconv.Itoa(i) + "=x")
	}
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startEnv(t, envOpts{strategy: strategy})
			res := e.rawDo(http.MethodGet, "/session", b.String(), nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			var cleared int
			for _, c := range setCookies(res.Header) {
				if c.Name == name || strings.HasPrefix(c.Name, name+".") {
					cleared++
				}
			}
			require.Equal(t, 1+65, cleared)
		})
	}
}
