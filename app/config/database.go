package config

import (
	"path/filepath"

	"github.com/latchkey-auth/latchkey/app/config/sqlitepath"
)

// DatabasePath returns the SQLite file DatabaseURL names, or
// <data_dir>/latchkey.db when it is empty. It is "" when DatabaseURL is
// refused by Validate, so a configuration that skipped validation fails to
// open instead of opening some other file.
func (c *Config) DatabasePath() string {
	path, err := c.databasePath()
	if err != nil {
		return ""
	}
	return path
}

// databasePath reads DatabaseURL (sqlitepath.Parse), <data_dir>/latchkey.db
// when it is empty.
func (c *Config) databasePath() (string, error) {
	if c.DatabaseURL == "" {
		return filepath.Join(c.DataDir, "latchkey.db"), nil
	}
	return sqlitepath.Parse(c.DatabaseURL)
}
