//go:build linked

package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// holdLatchkey builds a latchkey App from the configuration file at path
// (and the environment, as latchkey reads them) and returns the function
// that closes it. The App is never served: it is there for what it costs
// the process to carry it.
func holdLatchkey(path string) (func(), error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(data, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if _, err := cfg.Validate(app.CatalogueExtra); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := cfg.EnsureSecret(); err != nil {
		return nil, err
	}
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, fmt.Errorf("latchkey: %w", err)
	}
	return func() { _ = a.Close() }, nil
}
