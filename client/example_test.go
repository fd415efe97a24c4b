package client_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/client"
)

// Remote mode: every request's session cookie is checked with latchkey's
// GET /session (cached for a few seconds). Works with both session
// strategies; a sign-out is seen within CacheTTL.
func ExampleNewRemote() {
	remote, err := client.NewRemote(client.RemoteOptions{
		URL:      "http://127.0.0.1:3000/api/auth", // how this backend reaches latchkey
		CacheTTL: 5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	auth, err := client.New(remote, client.Options{
		UnavailableStatus: http.StatusServiceUnavailable, // latchkey down: refuse, never let through
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/me", auth.RequireUser(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := client.UserFrom(r.Context())
		fmt.Fprintf(w, "hello %s\n", u.Email)
	})))
	log.Fatal(http.ListenAndServe(":8080", mux))
}

// Local mode (session.strategy: jwt): the cookie is decrypted here with
// latchkey's AUTH_SECRET, no request to latchkey.
func ExampleNewLocal() {
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{"the-same-AUTH_SECRET-as-latchkey-0123456789"}})
	if err != nil {
		log.Fatal(err)
	}
	auth, err := client.New(local, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	h := auth.RequireUser(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := client.UserFrom(r.Context())
		fmt.Fprintf(w, "hello %s (%s)", u.Email, u.ID)
	}))

	// A browser signed in to latchkey sends a cookie like this one.
	signedIn := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	signedIn.Header.Set("Cookie", "next-auth.session-token="+latchkeyToken("the-same-AUTH_SECRET-as-latchkey-0123456789"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, signedIn)
	fmt.Println(w.Code, w.Body.String())

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/me", nil))
	fmt.Println(w.Code)
	// Output:
	// 200 hello ada@example.com (user-1)
	// 401
}

// Pages send signed-out visitors to latchkey's sign-in page, which brings
// them back to the same URL on the configured origin.
func ExampleOptions_redirect() {
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{"the-same-AUTH_SECRET-as-latchkey-0123456789"}})
	if err != nil {
		log.Fatal(err)
	}
	pages, err := client.New(local, client.Options{
		Redirect:     true,
		SignInBase:   "https://app.example.com/api/auth", // latchkey's SERVICE_URL
		PublicOrigin: "https://app.example.com",          // this app, as the browser sees it
	})
	if err != nil {
		log.Fatal(err)
	}
	h := pages.RequireUser(http.NotFoundHandler())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/reports?year=2026", nil))
	fmt.Println(w.Code, w.Header().Get("Location"))
	// Output:
	// 302 https://app.example.com/api/auth/signin?callbackUrl=https%3A%2F%2Fapp.example.com%2Freports%3Fyear%3D2026
}

// latchkeyToken mints the session token latchkey's jwt strategy writes
// (next-auth v4 format), for the examples.
func latchkeyToken(secret string) string {
	key, err := jwt.NewKey(secret, "", jwt.V4)
	if err != nil {
		log.Fatal(err)
	}
	tok, err := key.Encode(map[string]any{"sub": "user-1", "email": "ada@example.com"}, time.Hour, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	return tok
}
