package ops

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// StartMetrics opens the metrics listener at addr (metrics.listen,
// METRICS_ADDR) and serves GET /metrics there with metrics, on a listener
// of its own so the public port never exposes them. The service starts it
// and stops it (ShutdownMetrics); a listener that cannot be opened stops
// the start-up. A serving error after the start goes to errc.
func StartMetrics(addr string, metrics http.Handler, log *slog.Logger, errc chan<- error) (*http.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener (metrics.listen, METRICS_ADDR) %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("metrics listening", "addr", l.Addr().String(), "path", "/metrics")
	go func() {
		if err := srv.Serve(l); err != http.ErrServerClosed {
			errc <- fmt.Errorf("metrics: %w", err)
		}
	}()
	return srv, nil
}

// ShutdownMetrics stops the metrics server, if there is one (srv nil: none).
func ShutdownMetrics(ctx context.Context, srv *http.Server) error {
	if srv == nil {
		return nil
	}
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
