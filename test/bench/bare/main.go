// Command bare is the baseline of `go tool task bench:http`: an Echo v4
// server (the Echo of latchkey's go.mod) with one handler answering {}, no
// middleware. latchkey's routes are measured against it side by side, on
// the same machine in the same rounds, so that their ratio to it means
// something on a noisy, shared machine.
//
// Built with -tags linked and run with -beside CONFIG, it also builds a
// latchkey App from that configuration and keeps it, unserved, for as long
// as it runs (beside_linked.go): the same handlers then answer from a
// process that carries all of latchkey but its requests (every package
// linked and initialised, the App's live heap, its garbage collector's
// work), which is the floor under latchkey's own answers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
)

// sessionHeaders are latchkey's headers on a cookieless GET /session.
var sessionHeaders = [][2]string{
	{"Cache-Control", "private, no-cache, no-store"},
	{"Expires", "0"},
	{"Pragma", "no-cache"},
	{"Set-Cookie", "next-auth.csrf-token=d96a61a1329adbbfe358959fb2d9c206e7536e03a48c3785058ec11907dc4fdd%7C56797b9652caf93607e87bbdede4110c26184983f900586d34aaec24571cdebc; Path=/; HttpOnly; SameSite=Lax"},
	{"Set-Cookie", "next-auth.callback-url=http%3A%2F%2F127.0.0.1%3A3000; Path=/; HttpOnly; SameSite=Lax"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"X-Request-Id", "4172e2b1c708b62f91cd622f95b9e31c"},
}

func main() {
	addr := flag.String("addr", "127.0.0.1:3999", "address to listen on")
	beside := flag.String("beside", "", "a latchkey configuration file: hold a latchkey App built from it while serving (needs -tags linked)")
	flag.Parse()
	if *beside != "" {
		release, err := holdLatchkey(*beside)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bare:", err)
			os.Exit(1)
		}
		defer release()
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/", func(c echo.Context) error {
		return c.JSON(http.StatusOK, struct{}{})
	})
	// /headers answers {} with the header set of latchkey's GET /session
	// to a browser without cookies (next-auth's no-cache trio, latchkey's
	// framing and sniffing headers, without the CSP and the
	// Referrer-Policy, which JSON answers do without, its request id, the
	// CSRF and callback-url cookies), every value a constant of the same
	// length: what net/http alone charges for that answer, the floor under
	// latchkey's "no cookie" figure.
	e.GET("/headers", func(c echo.Context) error {
		h := c.Response().Header()
		for _, kv := range sessionHeaders {
			h[kv[0]] = append(h[kv[0]], kv[1])
		}
		return c.JSONBlob(http.StatusOK, []byte("{}"))
	})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- e.Start(*addr) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "bare:", err)
			os.Exit(1)
		}
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Shutdown(shutdown)
	}
}
