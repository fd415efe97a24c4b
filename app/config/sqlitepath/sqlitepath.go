// Package sqlitepath reads the SQLite file a DATABASE_URL names, as
// go-sqlite3 would open it, refusing what would open some other database
// (an in-memory one, a file in folders named after a mistyped URL) or
// silently drop an option. app/config applies it; it has no state.
package sqlitepath

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Parse reads a DATABASE_URL that is not PostgreSQL's. A plain path is the file name, taken
// literally up to a "?" that starts options (as go-sqlite3 reads it). The
// URL forms file:NAME, sqlite://NAME and sqlite3://NAME decode %XX as
// SQLite does and may not carry a "#" fragment, which SQLite would drop from
// the name. The name must be a file: an in-memory database is refused.
func Parse(raw string) (string, error) {
	name, prefix := raw, ""
	for _, p := range []string{"sqlite3://", "sqlite://", "file:"} {
		if rest, ok := strings.CutPrefix(raw, p); ok {
			name, prefix = rest, p
			break
		}
	}
	if scheme, ok := ForeignScheme(raw); ok {
		return "", fmt.Errorf("the scheme %q is neither postgres:// nor a SQLite file (a path, file:PATH, sqlite://PATH); PostgreSQL's is postgres:// or postgresql://, in lower case", scheme)
	}
	isURL := prefix != ""
	if isURL && strings.Contains(name, "#") {
		return "", errors.New(`"#" starts a URL fragment, which SQLite leaves out of the file name: write %23 for a # in the name, or give a plain path`)
	}
	name, query, _ := strings.Cut(name, "?")
	if prefix == "file:" {
		var err error
		if name, err = withoutAuthority(name); err != nil {
			return "", err
		}
	}
	if isURL {
		var err error
		if name, err = url.PathUnescape(name); err != nil {
			return "", fmt.Errorf("bad %%-escape in the file name: %w", err)
		}
	}
	memory, err := checkOptions(query)
	if err != nil {
		return "", err
	}
	switch {
	case memory || name == ":memory:":
		return "", errors.New("an in-memory database is not supported: SQLite gives each pooled connection its own, so sessions and sign-in links would vanish between requests; give a file path")
	case name == "":
		return "", errors.New("names no file; give a path such as data/latchkey.db")
	}
	return name, nil
}

// ForeignScheme reports the scheme of a DatabaseURL that names one but is
// neither SQLite's nor, as pgx reads it, PostgreSQL's (Postgres://, a
// typo, another database): taken as a file name it would have become an
// empty SQLite database in folders named after the URL, password and all.
func ForeignScheme(raw string) (string, bool) {
	scheme, _, found := strings.Cut(raw, "://")
	if !found || strings.ContainsAny(scheme, "/?") {
		return "", false
	}
	switch scheme {
	case "file", "sqlite", "sqlite3", "postgres", "postgresql":
		return "", false
	}
	return scheme, true
}

// withoutAuthority strips the "//" authority of a file: URL, which SQLite
// accepts only empty or "localhost".
func withoutAuthority(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, "//")
	if !ok {
		return s, nil
	}
	host, path, _ := strings.Cut(rest, "/")
	if host != "" && host != "localhost" {
		return "", fmt.Errorf("file: URL with host %q: only a local file is supported (file:/path or file:///path)", host)
	}
	return "/" + path, nil
}

// harmlessOptions are the query options accepted, each with the values
// that ask for what latchkey does anyway (it sets its own: WAL, foreign
// keys, busy timeout, read-write-create). cache only tunes memory shared
// among latchkey's own connections. Any other option or value is refused
// rather than dropped: mode=ro or _busy_timeout=100 would not be honoured.
var harmlessOptions = map[string][]string{
	"_fk":           {"1", "true", "on", "yes"},
	"_foreign_keys": {"1", "true", "on", "yes"},
	"_journal":      {"wal"},
	"_journal_mode": {"wal"},
	"cache":         {"shared", "private"},
	"mode":          {"rwc"},
}

// checkOptions vets a DatabaseURL's query and reports whether it asks for
// an in-memory database (mode=memory).
func checkOptions(query string) (memory bool, err error) {
	if query == "" {
		return false, nil
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return false, fmt.Errorf("options %q: %w", query, err)
	}
	var refused []string
	for key, vs := range values {
		for _, v := range vs {
			if key == "mode" && strings.EqualFold(v, "memory") {
				memory = true
				continue
			}
			if !hasFold(harmlessOptions[key], v) {
				refused = append(refused, key+"="+v)
			}
		}
	}
	if memory || len(refused) == 0 {
		return memory, nil
	}
	slices.Sort(refused)
	what, it := "option", "it"
	if len(refused) > 1 {
		what, it = "options", "them"
	}
	return false, fmt.Errorf("unsupported %s %s: latchkey sets its own SQLite options (WAL, foreign keys, busy timeout); remove %s",
		what, strings.Join(refused, ", "), it)
}

func hasFold(list []string, v string) bool {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}
