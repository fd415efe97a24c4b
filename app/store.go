package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/startup"
)

// StoreConfig is the database the config names, with its pool settings:
// PostgreSQL for a postgres URL, else the SQLite file.
func StoreConfig(cfg config.Config) models.Config {
	c := models.Config{
		Dialect:          models.DialectSQLite,
		DSN:              cfg.DatabasePath(),
		MaxOpen:          cfg.Database.MaxOpen,
		MaxIdle:          cfg.Database.MaxIdle,
		ConnMaxLifetime:  cfg.Database.ConnMaxLifetime.D(),
		ConnMaxIdleTime:  cfg.Database.ConnMaxIdleTime.D(),
		StatementTimeout: cfg.Database.StatementTimeout.D(),
		Outbox:           webhookOutbox(cfg),
	}
	if cfg.IsPostgres() {
		c.Dialect, c.DSN = models.DialectPostgres, cfg.DatabaseURL
	}
	return c
}

// openStore opens the configured database, waiting for a PostgreSQL that
// is not ready (a fail-over under way, a database host still starting) up
// to database.startup_wait (models/startup). When it does not answer, the
// error names the setting to check, with the URL's password masked, since
// at start-up that is almost always the fix.
// Failed statements count in m's latchkey_db_errors_total.
func openStore(ctx context.Context, cfg config.Config, m *metrics.Metrics, log *slog.Logger) (*models.Store, error) {
	sc := StoreConfig(cfg)
	if m != nil {
		sc.OnError = m.DBError
	}
	s, err := startup.Connect(ctx, sc, startup.Wait{For: cfg.Database.StartupWait.D(), Log: log, Target: cfg.RedactedDatabaseURL()})
	if errors.Is(err, models.ErrNoAnswer) {
		return nil, fmt.Errorf("%w; check database_url (DATABASE_URL) %s and that the server is running and accepts connections from here", err, cfg.RedactedDatabaseURL())
	}
	return s, err
}
