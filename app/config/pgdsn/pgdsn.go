// Package pgdsn reads PostgreSQL connection strings (a postgres:// URL or
// pgx's key=value form) for what latchkey says about them: whether a
// string names PostgreSQL, the value of one setting, the string with its
// secrets masked for logs, and what check-config refuses or warns of. pgx
// itself parses them to connect; this package exists because pgx offers
// neither a setting as written nor a redacted form.
package pgdsn

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsPostgres reports whether s names a PostgreSQL database: a postgres://
// or postgresql:// URL, or a key=value string (host=... dbname=...,
// spaces around "=" allowed, as pgx reads it).
func IsPostgres(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		return true
	}
	for _, kw := range keywordPairs(s) {
		if kw.key == "host" || kw.key == "dbname" || kw.key == "user" {
			return true
		}
	}
	return false
}

// Setting is the value of a connection parameter as s writes it (the
// URL's query or a key=value pair, quotes taken off), "" when absent.
func Setting(s, key string) string {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return u.Query().Get(key)
	}
	value := ""
	for _, kw := range keywordPairs(s) {
		if kw.key == key {
			value = strings.Trim(kw.raw, "'")
		}
	}
	return value
}

// secretSettings are the connection parameters that hold a secret: the
// password, and the passphrase of a TLS client key.
var secretSettings = map[string]bool{"password": true, "sslpassword": true}

// Redact is a PostgreSQL connection string fit for logs: a password (in
// the userinfo, or a password= or sslpassword= query option or key) is
// replaced by ***, whatever the form: one host or several
// (host1:5432,host2:5432), URL or key=value.
func Redact(s string) string {
	if !strings.Contains(s, "://") {
		return redactKeywords(s)
	}
	scheme, rest, _ := strings.Cut(s, "://")
	u, err := url.Parse(s)
	if err != nil {
		return scheme + "://" + redactUnparsed(rest)
	}
	// The query as written (hosts lists and all), only secrets replaced:
	// re-encoding it would show the operator another string than theirs.
	u.RawQuery = redactQuery(u.RawQuery)
	if _, has := u.User.Password(); !has {
		return u.String()
	}
	// Written by hand: url.UserPassword would escape *** as %2A%2A%2A.
	user := u.User.Username()
	u.User = nil
	scheme, rest, _ = strings.Cut(u.String(), "://")
	return scheme + "://" + url.User(user).String() + ":***@" + rest
}

// redactUnparsed is what may be shown of a URL (after its scheme) that
// does not parse: the host part alone. A password may hold any character,
// "@" and "?" included, so everything up to the last "@" goes, and the
// query (which may hold a password too); when a "?" comes before that
// "@", which of them belongs to the password cannot be told: all goes.
func redactUnparsed(rest string) string {
	at, q := strings.LastIndexByte(rest, '@'), strings.IndexByte(rest, '?')
	switch {
	case at < 0 && q < 0:
		return rest
	case at < 0:
		return rest[:q]
	case q < 0 || q > at:
		host, _, _ := strings.Cut(rest[at+1:], "?")
		return "***@" + host
	}
	return "***"
}

// redactQuery replaces the value of every secret option of a raw URL
// query (pgx reads the password from the query too).
func redactQuery(raw string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		key, _, _ := strings.Cut(p, "=")
		if k, err := url.QueryUnescape(key); err == nil && secretSettings[k] || secretSettings[key] {
			parts[i] = key + "=***"
		}
	}
	return strings.Join(parts, "&")
}

// redactKeywords masks the secrets of a key=value connection string as
// pgx reads it (keywordPairs): spaces around "=" and quoted values with
// spaces or escaped quotes in them (password = 'it\'s s3cret') included.
func redactKeywords(s string) string {
	pairs := keywordPairs(s)
	out := make([]string, 0, len(pairs))
	for _, kw := range pairs {
		switch {
		case kw.key == "" && kw.raw != "":
			out = append(out, kw.raw) // not a pair (pgx refuses the string)
		case secretSettings[kw.key]:
			out = append(out, kw.key+"=***")
		default:
			out = append(out, kw.key+"="+kw.raw)
		}
	}
	return strings.Join(out, " ")
}

// keyword is one key=value pair of a connection string, its value as
// written (quotes and escapes kept).
type keyword struct{ key, raw string }

// connSpace is the whitespace pgx skips between and inside pairs.
const connSpace = " \t\n\r\v\f"

// keywordPairs splits a key=value connection string the way pgx does
// (pgconn's parseKeywordValueSettings): whitespace may surround "=", a
// value is single-quoted or ends at whitespace, and a backslash escapes
// the next character in both. So "password= x" is the password "x", and
// an unterminated quote makes the rest of the string its value.
func keywordPairs(s string) []keyword {
	var out []keyword
	s = strings.TrimLeft(s, connSpace)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			out = append(out, keyword{raw: s})
			break
		}
		kw := keyword{key: strings.Trim(s[:eq], connSpace)}
		s = strings.TrimLeft(s[eq+1:], connSpace)
		end := valueEnd(s)
		kw.raw, s = s[:end], strings.TrimLeft(s[end:], connSpace)
		out = append(out, kw)
	}
	return out
}

// valueEnd is the length of the value that starts s.
func valueEnd(s string) int {
	quoted := strings.HasPrefix(s, "'")
	i := 0
	if quoted {
		i = 1
	}
	for ; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case quoted && s[i] == '\'':
			return i + 1
		case !quoted && strings.IndexByte(connSpace, s[i]) >= 0:
			return i
		}
	}
	return len(s)
}

// Problem is what is wrong with a PostgreSQL connection string, in words
// that never repeat the password. latchkey writes on every sign-in, so a
// target_session_attrs that asks for a standby is refused: every write
// would fail.
func Problem(dsn string) error {
	if _, err := pgconn.ParseConfig(dsn); err != nil {
		return errors.New("not a valid PostgreSQL connection string (postgres://user:password@host:5432/dbname?sslmode=require, or host=... dbname=...)")
	}
	switch attrs := Setting(dsn, "target_session_attrs"); attrs {
	case "read-only", "standby", "prefer-standby":
		return fmt.Errorf("target_session_attrs=%s connects to a standby, where every sign-in fails (latchkey writes): use read-write (or primary)", attrs)
	}
	return nil
}

// Warnings are what check-config says about a connection string that
// works but may not do what the operator meant: several hosts (a cluster
// that fails over) without target_session_attrs=read-write, with which
// pgx takes the first host that answers, a standby included.
func Warnings(dsn string) []string {
	pc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil
	}
	hosts := map[string]bool{pc.Host + ":" + strconv.Itoa(int(pc.Port)): true}
	for _, f := range pc.Fallbacks { // one per host, and per TLS mode tried
		hosts[f.Host+":"+strconv.Itoa(int(f.Port))] = true
	}
	attrs := Setting(dsn, "target_session_attrs")
	if len(hosts) < 2 || attrs == "read-write" || attrs == "primary" {
		return nil
	}
	return []string{fmt.Sprintf("database_url (DATABASE_URL) names %d hosts without target_session_attrs=read-write:"+
		" latchkey may connect to a standby, where every sign-in fails; add ?target_session_attrs=read-write"+
		" (or target_session_attrs=read-write in the key=value form), unless PGTARGETSESSIONATTRS sets it", len(hosts))}
}
