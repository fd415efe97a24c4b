package config

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/latchkey-auth/latchkey/app/config/pgdsn"
)

// IsPostgres reports whether DatabaseURL names a PostgreSQL database: a
// postgres:// or postgresql:// URL, or a key=value string (host=... dbname=...,
// spaces around "=" allowed, as pgx reads it).
func (c *Config) IsPostgres() bool { return pgdsn.IsPostgres(c.DatabaseURL) }

// postgresProblem is what is wrong with a PostgreSQL DatabaseURL, in words
// that never repeat the password. latchkey writes on every sign-in, so a
// target_session_attrs that asks for a standby is refused: every write
// would fail.
func (c *Config) postgresProblem() error {
	if _, err := pgconn.ParseConfig(c.DatabaseURL); err != nil {
		return errors.New("not a valid PostgreSQL connection string (postgres://user:password@host:5432/dbname?sslmode=require, or host=... dbname=...)")
	}
	switch attrs := c.postgresSetting("target_session_attrs"); attrs {
	case "read-only", "standby", "prefer-standby":
		return fmt.Errorf("target_session_attrs=%s connects to a standby, where every sign-in fails (latchkey writes): use read-write (or primary)", attrs)
	}
	return nil
}

// postgresWarnings are what check-config says about a DatabaseURL that
// works but may not do what the operator meant: several hosts (a cluster
// that fails over) without target_session_attrs=read-write, with which
// pgx takes the first host that answers, a standby included.
func (c *Config) postgresWarnings() []string {
	pc, err := pgconn.ParseConfig(c.DatabaseURL)
	if err != nil {
		return nil
	}
	hosts := map[string]bool{pc.Host + ":" + strconv.Itoa(int(pc.Port)): true}
	for _, f := range pc.Fallbacks { // one per host, and per TLS mode tried
		hosts[f.Host+":"+strconv.Itoa(int(f.Port))] = true
	}
	attrs := c.postgresSetting("target_session_attrs")
	if len(hosts) < 2 || attrs == "read-write" || attrs == "primary" {
		return nil
	}
	return []string{fmt.Sprintf("database_url (DATABASE_URL) names %d hosts without target_session_attrs=read-write:"+
		" latchkey may connect to a standby, where every sign-in fails; add ?target_session_attrs=read-write"+
		" (or target_session_attrs=read-write in the key=value form), unless PGTARGETSESSIONATTRS sets it", len(hosts))}
}

// postgresSetting is the value of a connection parameter as DatabaseURL
// writes it, "" when absent.
func (c *Config) postgresSetting(key string) string { return pgdsn.Setting(c.DatabaseURL, key) }

// RedactedDatabaseURL is DatabaseURL fit for logs: a PostgreSQL password
// (in the userinfo, or a password= or sslpassword= query option or key) is
// replaced by ***, whatever the form (pgdsn.Redact), as is the password of
// a URL of another scheme, which Validate refuses. A SQLite path is shown
// as it is.
func (c *Config) RedactedDatabaseURL() string {
	if _, foreign := foreignScheme(c.DatabaseURL); !c.IsPostgres() && !foreign {
		return c.DatabaseURL
	}
	return pgdsn.Redact(c.DatabaseURL)
}
