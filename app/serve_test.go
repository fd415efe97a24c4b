package app_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// serveApp runs cfg's app through Serve on a real loopback listener, as main
// does, until the test ends; it returns the base URL the listener answers.
func serveApp(t *testing.T, cfg config.Config) string {
	t.Helper()
	_, err := cfg.Validate(app.CatalogueExtra)
	require.NoError(t, err)
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
		_ = a.Close()
	})
	return "http://" + l.Addr().String() + a.Base().Path
}
