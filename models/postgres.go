package models

import (
	"fmt"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models/failover"
)

// postgresDialector opens PostgreSQL through pgx's database/sql driver
// wrapped by package failover, which marks fail-over errors, drops the
// connections they leave behind and retries what is safe to.
func postgresDialector(dsn string) (gorm.Dialector, error) {
	db, err := failover.Open(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres database: %w", err)
	}
	return postgres.New(postgres.Config{Conn: db}), nil
}
