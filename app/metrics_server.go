package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// startMetrics opens the metrics listener (metrics.listen, METRICS_ADDR)
// when metrics are on and serves GET /metrics there, on a listener of its
// own so the public port never exposes them. Serve starts it with the
// service and stops it with the service; a listener that cannot be opened
// stops the start-up. It returns nil when metrics are off.
func (a *App) startMetrics(errc chan<- error) (*http.Server, error) {
	if a.metrics == nil {
		return nil, nil
	}
	l, err := net.Listen("tcp", a.cfg.Metrics.Listen)
	if err != nil {
		return nil, fmt.Errorf("metrics listener (metrics.listen, METRICS_ADDR) %s: %w", a.cfg.Metrics.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	a.log.Info("metrics listening", "addr", l.Addr().String(), "path", "/metrics")
	go func() {
		if err := srv.Serve(l); err != http.ErrServerClosed {
			errc <- fmt.Errorf("metrics: %w", err)
		}
	}()
	return srv, nil
}

// shutdownMetrics stops the metrics server, if there is one.
func shutdownMetrics(ctx context.Context, srv *http.Server) error {
	if srv == nil {
		return nil
	}
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// MetricsHandler serves the metrics (what GET /metrics on the metrics
// listener answers), for tests and embedding; nil when metrics are off.
func (a *App) MetricsHandler() http.Handler {
	if a.metrics == nil {
		return nil
	}
	return a.metrics.Handler()
}
