package pgdsn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A PostgreSQL password never reaches a log line, wherever the URL keeps
// it: one host or several (a cluster that fails over), URL or key=value,
// and the options beside it are shown as written.
func TestRedact(t *testing.T) {
	cases := map[string]string{
		"postgres://app:s3cr%40t@db:5432/auth?sslmode=require": "postgres://app:***@db:5432/auth?sslmode=require",
		"postgresql://app@db/auth":                             "postgresql://app@db/auth",
		"postgres://db/auth?user=app&password=s3cret":          "postgres://db/auth?user=app&password=***",
		"postgres://app:s3cret@db:not-a-port/auth":             "postgres://***@db:not-a-port/auth",
		"host=db dbname=auth password=s3cret user=app":         "host=db dbname=auth password=*** user=app",
		"host=db password='s3 cr et' user=app":                 "host=db password=*** user=app",
		`host=db password='it\'s s3cret' user=app`:             "host=db password=*** user=app",
		// Several hosts, as a pg_auto_failover or Patroni cluster is named.
		"postgres://app:s3cret@127.0.0.1:5432,127.0.0.1:5433/latchkey?target_session_attrs=read-write":           "postgres://app:***@127.0.0.1:5432,127.0.0.1:5433/latchkey?target_session_attrs=read-write",
		"postgresql://app:s3c@ret@pg-a,pg-b:6432/latchkey?target_session_attrs=primary":                          "postgresql://app:***@pg-a,pg-b:6432/latchkey?target_session_attrs=primary",
		"postgres:///latchkey?host=pg-a,pg-b&port=5432,5433&password=s3cret&sslpassword=s3ckey":                  "postgres:///latchkey?host=pg-a,pg-b&port=5432,5433&password=***&sslpassword=***",
		"postgres://app:s3cret@[::1]:5432,[::1]:5433/latchkey":                                                   "postgres://***@[::1]:5432,[::1]:5433/latchkey",
		"host=pg-a,pg-b port=5432,5433 user=app password=s3cret dbname=latchkey target_session_attrs=read-write": "host=pg-a,pg-b port=5432,5433 user=app password=*** dbname=latchkey target_session_attrs=read-write",
		// pgx allows spaces around "=": the value after them is the password.
		"host=pg-a,pg-b password = s3cret dbname=latchkey": "host=pg-a,pg-b password=*** dbname=latchkey",
		"host=pg-a,pg-b password= s3cret dbname=latchkey":  "host=pg-a,pg-b password=*** dbname=latchkey",
		"host = pg-a dbname = latchkey password = s3cret":  "host=pg-a dbname=latchkey password=***",
		"host=pg-a sslpassword='s3c ret' password=s3cret":  "host=pg-a sslpassword=*** password=***",
		"host=pg-a password='s3cret unterminated":          "host=pg-a password=***",
		// Unparseable URLs: only what is surely not the password.
		"postgres://app:s3c?ret@db:bad/auth":     "postgres://***",
		"postgres://db:bad/auth?password=s3cret": "postgres://db:bad/auth",
	}
	for in, want := range cases {
		require.True(t, IsPostgres(in), in)
		got := Redact(in)
		require.Equal(t, want, got, in)
		require.NotContains(t, got, "s3c", in)
		require.NotContains(t, got, "ret", in)
	}
}

// Setting reads a parameter as the string writes it, in either form;
// IsPostgres tells a PostgreSQL string from a SQLite path.
func TestSettingAndIsPostgres(t *testing.T) {
	require.Equal(t, "read-write", Setting("postgres://db/auth?target_session_attrs=read-write", "target_session_attrs"))
	require.Equal(t, "read-write", Setting("host=db target_session_attrs = 'read-write'", "target_session_attrs"))
	require.Equal(t, "it\\'s", Setting(`host=db password='it\'s'`, "password"), "quotes off, escapes as written")
	require.Empty(t, Setting("host=db", "target_session_attrs"))
	require.Empty(t, Setting("postgres://db:bad port/auth?x=1", "x"), "a URL that does not parse has no settings")
	for s, want := range map[string]bool{
		"postgres://db/auth": true, "postgresql://db/auth": true, " host = db": true, "dbname=auth": true, "user=app": true,
		"/var/lib/latchkey/auth.db": false, "file:auth.db?mode=rwc": false, "sqlite://auth.db": false, "": false,
	} {
		require.Equal(t, want, IsPostgres(s), s)
	}
}
