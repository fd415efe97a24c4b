package oauth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An answer of exactly the limit reads whole; one byte more is an error,
// not a truncated body, naming the URL without its query.
func TestBoundedAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	}))
	defer srv.Close()
	hc := bounded(srv.Client())
	read := func(n int) (int, error) {
		resp, err := hc.Get(srv.URL + "/me?access_token=secret-token&n=" + strconv.Itoa(n))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return len(b), err
	}
	n, err := read(maxAnswerBytes)
	require.NoError(t, err)
	require.Equal(t, maxAnswerBytes, n)
	_, err = read(maxAnswerBytes + 1)
	require.ErrorContains(t, err, "/me is over 1048576 bytes")
	require.NotContains(t, err.Error(), "secret-token", "the query can carry the access token")
}

// A POST answered with a 307 elsewhere (a token endpoint's) is not sent on:
// its body holds the code, the verifier, maybe the client secret. A GET's
// redirect is followed.
func TestPostsAreNotRedirected(t *testing.T) {
	var leaked []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		leaked = append(leaked, r.Method+" "+string(b))
		_, _ = io.WriteString(w, "ok")
	}))
	defer elsewhere.Close()
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer idp.Close()
	hc := bounded(idp.Client())

	resp, err := hc.Post(idp.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("code=c&code_verifier=v&client_secret=s"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	require.Empty(t, leaked, "the form went to another host")

	resp, err = hc.Get(idp.URL + "/.well-known/openid-configuration")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, []string{"GET "}, leaked)
}
