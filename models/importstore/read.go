package importstore

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// User is a next-auth user row.
type User struct {
	ID                 string
	Name, Email, Image *string
	EmailVerified      *time.Time
	// Bad says why the row cannot come in as it is ("": it can): a
	// column that does not read as its type. The row is skipped for it,
	// not the import stopped (app/importer).
	Bad string
}

// Account is a next-auth account row (the link to a provider identity).
type Account struct {
	ID                          string // "" when the table has none
	UserID, Type, Provider, PAI string // PAI: providerAccountId
	// HasTokens: the row carries provider tokens (access, refresh or id
	// token), which the import keeps, sealed, for providers with
	// store_tokens (app/importer).
	HasTokens bool
	// The provider tokens as next-auth stores them (in the clear), and
	// their expiry (epoch seconds), type and scope; nil when absent.
	AccessToken, RefreshToken, IDToken *string
	ExpiresAt                          *int64
	TokenType, Scope                   *string
}

// Session is a next-auth database session: the token as the cookie holds it.
type Session struct {
	ID, Token, UserID string
	Expires           time.Time
	Bad               string // as User's
}

// VerificationToken is a mailed sign-in link's row: Token is next-auth's
// hash of the link's token with the secret, which latchkey stores as is.
type VerificationToken struct {
	Identifier, Token string
	Expires           time.Time
	Bad               string // as User's
}

// Cursor is where the next page of a table starts: the last row's key
// ("" before the first page). Pages are read in key order, so a page costs
// one index range scan however far into the table it is.
type Cursor []any

// Users reads up to n users after c.
func (s *Source) Users(ctx context.Context, c Cursor, n int) ([]User, Cursor, error) {
	var out []User
	next, err := s.page(ctx, 0, []string{"id"}, []string{"id", "name", "email", "emailVerified", "image"}, c, n, func(v []any) error {
		u := User{ID: text(v[0]), Name: optText(v[1]), Email: optText(v[2]), Image: optText(v[4])}
		if v[3] != nil {
			if t, err := toTime(v[3]); err != nil {
				u.Bad = "emailVerified is not a time"
			} else {
				u.EmailVerified = &t
			}
		}
		out = append(out, u)
		return nil
	})
	return out, next, err
}

// Accounts reads up to n accounts after c.
func (s *Source) Accounts(ctx context.Context, c Cursor, n int) ([]Account, Cursor, error) {
	cols := []string{"provider", "providerAccountId", "userId", "type"}
	if s.accountCols["id"] {
		cols = append(cols, "id")
	}
	tokenCols := []string{"access_token", "refresh_token", "id_token", "expires_at", "token_type", "scope"}
	var present []string
	for _, t := range tokenCols {
		if s.accountCols[t] {
			cols = append(cols, t)
			present = append(present, t)
		}
	}
	var out []Account
	next, err := s.page(ctx, 1, []string{"provider", "providerAccountId"}, cols, c, n, func(v []any) error {
		a := Account{Provider: text(v[0]), PAI: text(v[1]), UserID: text(v[2]), Type: text(v[3])}
		i := 4
		if s.accountCols["id"] {
			a.ID, i = text(v[4]), 5
		}
		for j, col := range present {
			val := v[i+j]
			switch col {
			case "expires_at":
				a.ExpiresAt = optInt(val)
				continue
			case "token_type":
				a.TokenType = optText(val)
				continue
			case "scope":
				a.Scope = optText(val)
				continue
			}
			tok := optText(val)
			if tok != nil && *tok == "" {
				tok = nil
			}
			a.HasTokens = a.HasTokens || tok != nil
			switch col {
			case "access_token":
				a.AccessToken = tok
			case "refresh_token":
				a.RefreshToken = tok
			case "id_token":
				a.IDToken = tok
			}
		}
		out = append(out, a)
		return nil
	})
	return out, next, err
}

// Sessions reads up to n sessions after c.
func (s *Source) Sessions(ctx context.Context, c Cursor, n int) ([]Session, Cursor, error) {
	var out []Session
	next, err := s.page(ctx, 2, []string{"sessionToken"}, []string{"sessionToken", "userId", "expires"}, c, n, func(v []any) error {
		out = append(out, Session{Token: text(v[0]), UserID: text(v[1])})
		if t, err := toTime(v[2]); err != nil {
			out[len(out)-1].Bad = "expires is not a time"
		} else {
			out[len(out)-1].Expires = t
		}
		return nil
	})
	return out, next, err
}

// VerificationTokens reads up to n verification tokens after c.
func (s *Source) VerificationTokens(ctx context.Context, c Cursor, n int) ([]VerificationToken, Cursor, error) {
	var out []VerificationToken
	next, err := s.page(ctx, 3, []string{"identifier", "token"}, []string{"identifier", "token", "expires"}, c, n, func(v []any) error {
		out = append(out, VerificationToken{Identifier: text(v[0]), Token: text(v[1])})
		if t, err := toTime(v[2]); err != nil {
			out[len(out)-1].Bad = "expires is not a time"
		} else {
			out[len(out)-1].Expires = t
		}
		return nil
	})
	return out, next, err
}

// page reads up to n rows of table i after c in key order (keyset
// pagination on the key columns, which lead cols), calling each for every
// row, and returns the cursor of the next page (nil when this one was the
// last).
func (s *Source) page(ctx context.Context, i int, key, cols []string, c Cursor, n int, each func([]any) error) (Cursor, error) {
	table := s.tables[i]
	q := "SELECT " + strings.Join(quoteAll(cols), ", ") + " FROM " + quote(table)
	if len(c) > 0 {
		marks := make([]string, len(c))
		for j := range c {
			marks[j] = s.mark(j + 1)
		}
		q += " WHERE (" + strings.Join(quoteAll(key), ", ") + ") > (" + strings.Join(marks, ", ") + ")"
	}
	q += " ORDER BY " + strings.Join(quoteAll(key), ", ") + " LIMIT " + strconv.Itoa(n)
	rows, err := s.db.QueryContext(ctx, q, c...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", quote(table), err)
	}
	defer rows.Close()
	var last []any
	count := 0
	for rows.Next() {
		v := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for j := range v {
			ptrs[j] = &v[j]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s: %w", quote(table), err)
		}
		if err := each(v); err != nil {
			return nil, err
		}
		// The key goes back as the driver gave it (a BLOB as []byte):
		// SQLite sorts every BLOB after every TEXT, so a BLOB key turned
		// into text would never compare past the page's own rows.
		last, count = v[:len(key)], count+1
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", quote(table), err)
	}
	if count < n {
		return nil, nil
	}
	if len(c) > 0 && reflect.DeepEqual([]any(c), last) {
		// Keys that do not compare as they sort would read this page
		// forever (the import runs without a cancelling context). The key
		// is not named: a session's is its token.
		return nil, fmt.Errorf("read %s: a page ends at the key it was read after (the key column's values do not compare as they sort); the import cannot go on", quote(table))
	}
	return Cursor(last), nil
}

func (s *Source) mark(i int) string {
	if s.dialect == "postgres" {
		return "$" + strconv.Itoa(i)
	}
	return "?"
}

// text is a column's value as a string (ids may be integers: the pg
// adapter's SERIAL).
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

func optText(v any) *string {
	if v == nil {
		return nil
	}
	s := text(v)
	return &s
}

// optInt reads an integer column (expires_at: seconds) as the adapters
// store it; nil when absent or not a number.
func optInt(v any) *int64 {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	case float64:
		n = int64(x)
	case string, []byte:
		p, err := strconv.ParseInt(text(x), 10, 64)
		if err != nil {
			return nil
		}
		n = p
	default:
		return nil
	}
	return &n
}

// toTime reads a timestamp as the adapters store it: a timestamp column,
// ISO 8601 text (SQLite through Kysely or Drizzle), or a number of
// milliseconds (Prisma's SQLite DateTime) or seconds.
func toTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case int64:
		if x > 100_000_000_000 { // after 1973 in milliseconds, far in the future in seconds
			return time.UnixMilli(x).UTC(), nil
		}
		return time.Unix(x, 0).UTC(), nil
	case float64:
		return toTime(int64(x))
	case []byte:
		return toTime(string(x))
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t.UTC(), nil
			}
		}
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return toTime(n)
		}
		return time.Time{}, fmt.Errorf("not a time: %q", x)
	}
	return time.Time{}, fmt.Errorf("not a time: %T", v)
}
