// Package importstore reads a next-auth database (an adapter's tables) and
// writes its rows into latchkey's (issue #33, `latchkey import next-auth`).
// It knows the tables and columns; what may be imported and how is the
// core's (app/importer).
//
// A next-auth database is one of three namings of the same four tables,
// whose columns the adapters share ("emailVerified", "userId",
// "providerAccountId", "sessionToken", snake_case token columns):
//
//   - prisma: "User", "Account", "Session", "VerificationToken" (the Prisma
//     adapter's models, and the Kysely adapter's documented schema);
//   - sql: users, accounts, sessions, verification_token (@auth/pg-adapter
//     and the SQL adapters' documented schemas);
//   - drizzle: "user", "account", "session", "verificationToken" (the
//     Drizzle adapter's default tables).
package importstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mattn/go-sqlite3" // the source may be a SQLite file: database/sql driver "sqlite3"
)

// Namings of the four tables, in the order auto-detection tries them.
const (
	SchemaPrisma  = "prisma"
	SchemaSQL     = "sql"
	SchemaDrizzle = "drizzle"
)

// tableNames are each naming's users, accounts, sessions and verification
// tokens tables.
var tableNames = map[string][4]string{
	SchemaPrisma:  {"User", "Account", "Session", "VerificationToken"},
	SchemaSQL:     {"users", "accounts", "sessions", "verification_token"},
	SchemaDrizzle: {"user", "account", "session", "verificationToken"},
}

// Schemas are the namings --schema takes.
func Schemas() []string { return []string{SchemaPrisma, SchemaSQL, SchemaDrizzle} }

// required are the columns the import reads from each table; a table
// without one of them is refused by name.
var required = [4][]string{
	{"id", "name", "email", "emailVerified", "image"},
	{"userId", "type", "provider", "providerAccountId"},
	{"sessionToken", "userId", "expires"},
	{"identifier", "token", "expires"},
}

// accountTokenColumns are the provider token columns an account may have.
var accountTokenColumns = []string{"access_token", "refresh_token", "id_token", "expires_at", "token_type", "scope", "session_state"}

// ErrUnknownSchema is the refusal of a database that is not a next-auth
// one the import knows; its message names what was missing.
var ErrUnknownSchema = errors.New("not a next-auth database this import knows")

// Source is an open next-auth database.
type Source struct {
	db      *sql.DB
	dialect string // "postgres" or "sqlite"
	schema  string
	tables  [4]string
	// accountCols are the account columns present (id and the tokens are
	// optional).
	accountCols map[string]bool
	// Described is the source for the summary, its password left out.
	Described string
}

// Open opens the next-auth database at from (a postgres:// URL, sqlite:PATH
// or a SQLite file's path; read only) and finds its tables: schema is
// one of Schemas or "" to detect it.
func Open(ctx context.Context, from, schema string) (*Source, error) {
	s := &Source{}
	var err error
	switch {
	case strings.HasPrefix(from, "postgres://"), strings.HasPrefix(from, "postgresql://"):
		cfg, perr := pgx.ParseConfig(from)
		if perr != nil {
			return nil, fmt.Errorf("--from %s: %w", redact(from), parseCause(perr))
		}
		s.db, s.dialect, s.Described = stdlib.OpenDB(*cfg), "postgres", redact(from)
	default:
		path := strings.TrimPrefix(strings.TrimPrefix(from, "sqlite://"), "sqlite:")
		if _, serr := os.Stat(path); serr != nil {
			return nil, fmt.Errorf("--from: no SQLite file %s: %w", path, serr)
		}
		s.db, err = sql.Open("sqlite3", "file:"+url.PathEscape(path)+"?mode=ro&_busy_timeout=5000")
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		s.dialect, s.Described = "sqlite", "sqlite:"+path
	}
	if err := s.db.PingContext(ctx); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("connect to %s: %w", s.Described, err)
	}
	if err := s.detect(ctx, schema); err != nil {
		_ = s.db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the source.
func (s *Source) Close() error { return s.db.Close() }

// Schema is the naming found (or given).
func (s *Source) Schema() string { return s.schema }

// detect picks the naming whose four tables exist (or checks the given
// one) and checks their columns.
func (s *Source) detect(ctx context.Context, schema string) error {
	candidates := Schemas()
	if schema != "" {
		if _, ok := tableNames[schema]; !ok {
			return fmt.Errorf("--schema %q: one of %s", schema, strings.Join(Schemas(), ", "))
		}
		candidates = []string{schema}
	}
	var missing []string
	for _, name := range candidates {
		tables := tableNames[name]
		cols := [4][]string{}
		var absent []string
		for i, t := range tables {
			c, err := s.columns(ctx, t)
			if err != nil {
				return err
			}
			if c == nil {
				absent = append(absent, quote(t))
			}
			cols[i] = c
		}
		if len(absent) > 0 {
			missing = append(missing, fmt.Sprintf("%s (%s): no table %s", name, strings.Join(quoteAll(tables[:]), ", "), strings.Join(absent, ", ")))
			continue
		}
		for i, t := range tables {
			for _, want := range required[i] {
				if !slices.Contains(cols[i], want) {
					return fmt.Errorf("%w: table %s has no column %s (the %s naming's %s expects %s)", ErrUnknownSchema,
						quote(t), quote(want), name, quote(t), strings.Join(quoteAll(required[i]), ", "))
				}
			}
		}
		s.schema, s.tables = name, tables
		s.accountCols = map[string]bool{}
		for _, c := range cols[1] {
			s.accountCols[c] = true
		}
		return nil
	}
	return fmt.Errorf("%w: expected the tables of one of the adapters' schemas; %s", ErrUnknownSchema, strings.Join(missing, "; "))
}

// columns are table's column names, nil when there is no such table.
func (s *Source) columns(ctx context.Context, table string) ([]string, error) {
	var exists bool
	var err error
	if s.dialect == "postgres" {
		err = s.db.QueryRowContext(ctx, "SELECT to_regclass($1) IS NOT NULL", quote(table)).Scan(&exists)
	} else {
		err = s.db.QueryRowContext(ctx, "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&exists)
	}
	if err != nil {
		return nil, fmt.Errorf("look for table %s: %w", quote(table), err)
	}
	if !exists {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, "SELECT * FROM "+quote(table)+" LIMIT 0")
	if err != nil {
		return nil, fmt.Errorf("read table %s: %w", quote(table), err)
	}
	defer rows.Close()
	return rows.Columns()
}

// HasTokenColumns reports whether the accounts table keeps provider tokens.
func (s *Source) HasTokenColumns() bool {
	return s.accountCols["access_token"] || s.accountCols["refresh_token"] || s.accountCols["id_token"]
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quote(n)
	}
	return out
}

// SecretParams are the connection URL's query parameters that hold a
// secret: the password, and the passphrase of the client certificate's
// key (libpq's sslpassword, which pgx reads too).
var SecretParams = []string{"password", "sslpassword"}

// parseCause is why pgx could not read a URL, without the URL: its
// ParseConfigError repeats the URL with only a password before the host
// masked (a ?password= or ?sslpassword= would show), and a url.Error
// quotes it whole.
func parseCause(err error) error {
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) && pce.Unwrap() != nil {
		err = pce.Unwrap()
	} else if pce != nil {
		return errors.New("not a PostgreSQL URL")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact is a URL with its secrets left out.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://…"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	for _, p := range SecretParams {
		if q.Has(p) {
			q.Set(p, "xxxxx")
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}
