// Command bare is the baseline of `go tool task bench:http`: an Echo v4
// server (the Echo of latchkey's go.mod) with one handler answering {}, no
// middleware. latchkey's routes are measured against it side by side, on
// the same machine in the same rounds, so that their ratio to it means
// something on a noisy, shared machine.
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

func main() {
	addr := flag.String("addr", "127.0.0.1:3999", "address to listen on")
	flag.Parse()

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/", func(c echo.Context) error {
		return c.JSON(http.StatusOK, struct{}{})
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
