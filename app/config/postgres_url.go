package config

import (
	"github.com/latchkey-auth/latchkey/app/config/pgdsn"
	"github.com/latchkey-auth/latchkey/app/config/sqlitepath"
)

// IsPostgres reports whether DatabaseURL names a PostgreSQL database: a
// postgres:// or postgresql:// URL, or a key=value string (host=... dbname=...,
// spaces around "=" allowed, as pgx reads it).
func (c *Config) IsPostgres() bool { return pgdsn.IsPostgres(c.DatabaseURL) }

// postgresProblem is what is wrong with a PostgreSQL DatabaseURL
// (pgdsn.Problem).
func (c *Config) postgresProblem() error { return pgdsn.Problem(c.DatabaseURL) }

// postgresWarnings are what check-config says about a DatabaseURL that
// works but may not do what the operator meant (pgdsn.Warnings).
func (c *Config) postgresWarnings() []string { return pgdsn.Warnings(c.DatabaseURL) }

// postgresSetting is the value of a connection parameter as DatabaseURL
// writes it, "" when absent.
func (c *Config) postgresSetting(key string) string { return pgdsn.Setting(c.DatabaseURL, key) }

// RedactedDatabaseURL is DatabaseURL fit for logs: a PostgreSQL password
// (in the userinfo, or a password= or sslpassword= query option or key) is
// replaced by ***, whatever the form (pgdsn.Redact), as is the password of
// a URL of another scheme, which Validate refuses. A SQLite path is shown
// as it is.
func (c *Config) RedactedDatabaseURL() string {
	if _, foreign := sqlitepath.ForeignScheme(c.DatabaseURL); !c.IsPostgres() && !foreign {
		return c.DatabaseURL
	}
	return pgdsn.Redact(c.DatabaseURL)
}
