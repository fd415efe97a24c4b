// Command pprofserve runs latchkey in process with net/http/pprof on a
// second loopback port, for profiling under wrk load (test/bench only):
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
)

//	go run ./test/bench/pprofserve config.yaml 127.0.0.1:6060 127.0.0.1:3000 &
//	wrk -t2 -c50 -d30s http://127.0.0.1:3000/api/auth/session &
//	go tool pprof -top 'http://127.0.0.1:6060/debug/pprof/profile?seconds=15'
//
// The environment (SERVICE_URL, AUTH_SECRET, ...) applies as for latchkey.
func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pprofserve:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: pprofserve CONFIG PPROF_ADDR LISTEN_ADDR")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	cfg, err := config.Load(data, os.LookupEnv)
	if err != nil {
		return err
	}
	if _, err := cfg.Validate(app.CatalogueExtra); err != nil {
		return err
	}
	if err := cfg.EnsureSecret(); err != nil {
		return err
	}
	// Logging as main sets it up: access lines batched (app/logs), at info.
	out := logs.NewOutput(os.Stderr, 100*time.Millisecond)
	defer out.Close()
	log := slog.New(slog.NewTextHandler(out, nil))
	a, err := app.New(cfg, app.Options{Logger: log, AccessLog: logs.NewAccess(out.Batched(), false, slog.LevelInfo)})
	if err != nil {
		return err
	}
	defer a.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	go func() { _ = http.ListenAndServe(args[1], mux) }()
	l, err := net.Listen("tcp", args[2])
	if err != nil {
		return err
	}
	return a.Serve(context.Background(), l)
}
