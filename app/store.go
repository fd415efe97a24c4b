package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
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
		StatementTimeout: cfg.Database.StatementTimeout.D(),
	}
	if cfg.IsPostgres() {
		c.Dialect, c.DSN = models.DialectPostgres, cfg.DatabaseURL
	}
	return c
}
