package echoauth_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/client"
	"github.com/latchkey-auth/latchkey/client/echoauth"
)

// The same middleware in an Echo application: here in local mode; a
// client.NewRemote resolver is wired the same way.
func Example() {
	const secret = "the-same-AUTH_SECRET-as-latchkey-0123456789"
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{secret}})
	if err != nil {
		log.Fatal(err)
	}
	auth, err := client.New(local, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	api := e.Group("/api", echoauth.RequireUser(auth))
	api.GET("/me", func(c echo.Context) error {
		u, _ := echoauth.UserFrom(c)
		return c.String(http.StatusOK, "hello "+u.Email)
	})

	// A browser signed in to latchkey (jwt strategy) sends a cookie like this one.
	key, _ := jwt.NewKey(secret, "", jwt.V4)
	token, _ := key.Encode(map[string]any{"sub": "user-1", "email": "ada@example.com"}, time.Hour, time.Now())
	req := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	req.Header.Set("Cookie", "next-auth.session-token="+token)
	w := httptest.NewRecorder()
	e.ServeHTTP(w, req)
	fmt.Println(w.Code, w.Body.String())

	w = httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/me", nil))
	fmt.Println(w.Code)
	// Output:
	// 200 hello ada@example.com
	// 401
}
