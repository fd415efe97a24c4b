package openidprovider

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCallbackServedOnlyAfterTheBrowserCheck: the library's callback,
// which hands the code to the client, runs only for a request that came
// through getCallback's check that the browser is the one that completed
// the request; one routed to the library another way (another spelling of
// the path that a router sends past the page route) is a 404, nothing
// issued.
func TestCallbackServedOnlyAfterTheBrowserCheck(t *testing.T) {
	a := newAnswering("https://ex.com/api/auth")
	h := a.intercept(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("passed on to the library's routes") }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, callbackPath+"?id=0123", nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf("unchecked callback: %d %s, want 404", w.Code, w.Body)
	}
}
