// Package scalefill fills a migrated database with many rows quickly, by
// multi-row INSERTs in large transactions on SQLite and COPY on PostgreSQL
// rather than through the store's methods: the EXPLAIN test of the request paths' queries and `go tool task
// bench:scale` (issue #36) measure latchkey against it. Every row is a
// function of its number, so a caller can rebuild any session's cookie
// (SessionToken) or user's address (Email) without reading the database.
package scalefill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Sizes are how many rows Fill writes to each table.
type Sizes struct {
	Users       int // each with one linked OAuth account ("github")
	Sessions    int // database sessions, spread over the users; every odd one expired
	Tokens      int // e-mail sign-in links; nine in ten expired
	RateLimits  int // rate-limit buckets
	Revocations int // per-user "not before" rows
	SignIns     int // jwt sign-ins; one in a hundred ended
	Webhooks    int // delivered webhook rows
}

// Default is the full size: a million users, ten million sessions.
var Default = Sizes{Users: 1_000_000, Sessions: 10_000_000, Tokens: 1_000_000, RateLimits: 100_000,
	Revocations: 10_000, SignIns: 1_000_000, Webhooks: 100_000}

// Scaled is d with every count multiplied by f (at least one user).
func (d Sizes) Scaled(f float64) Sizes {
	m := func(n int) int { return int(float64(n) * f) }
	return Sizes{Users: max(1, m(d.Users)), Sessions: m(d.Sessions), Tokens: m(d.Tokens), RateLimits: m(d.RateLimits),
		Revocations: m(d.Revocations), SignIns: m(d.SignIns), Webhooks: m(d.Webhooks)}
}

// UserID is user i's id.
func UserID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// Email is user i's address.
func Email(i int) string { return fmt.Sprintf("u%d@scale.example", i) }

// SessionID is the filled session i's primary key: a UUID spread over
// the whole key space, as ids drawn at random over years of sign-ins are,
// so that a new session's key lands among the filled ones in the index as
// it would in production (ids in one narrow range would all sort before a
// new one, and its insert would find a hot, recent leaf).
func SessionID(i int) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("latchkey-scale-session-"+strconv.Itoa(i))).String()
}

// SessionToken is session i's cookie value; sessions of even i are live.
func SessionToken(i int) string { return fmt.Sprintf("scale-session-%012d", i) }

// Password is the password of every tenth user (i a multiple of 10).
const Password = "scale-password"

// PasswordHash is the password of every tenth user (i a multiple of 10):
// a real Argon2id hash of Password, so a bench can sign in with it.
const PasswordHash = "$argon2id$v=19$m=19456,t=2,p=1$M48dyCSAWo2+HO2UkitWFw$t0GnUXParY51VdizIigqf2C2CV8fZv9ie/4YAFE9sZw"

// SessionUser is the user of session i.
func SessionUser(i int, s Sizes) int { return i % s.Users }

// TokenHash is how latchkey stores a session token (app/session.HashToken).
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// table is one table's fill: its columns and the values of row i.
type table struct {
	name string
	cols []string
	n    int
	row  func(i int) []any
}

// Fill writes sz's rows into s's migrated, empty database, relative to now,
// and ANALYZEs the tables so plans see their size. On PostgreSQL it
// VACUUMs them too, as autovacuum would have on a server that has been
// up: without it, the first read of each copied row sets its hint bits
// and dirties its page (measured at 10⁷: 0.16 pages dirtied per GET
// /session), and autovacuum, which the COPY's inserts wake, runs during
// whatever is measured next.
// progress, when not nil, is told each table's rows as they are written.
func Fill(ctx context.Context, s *models.Store, sz Sizes, now time.Time, progress func(table string, done int)) error {
	now = models.DBTime(now)
	base := now.Add(-365 * 24 * time.Hour)
	ms := time.Millisecond
	tables := []table{
		{"users", []string{"id", "name", "email", "email_verified", "created_at", "updated_at"}, sz.Users, func(i int) []any {
			at := base.Add(time.Duration(i) * ms)
			return []any{UserID(i), "User", Email(i), at, at, at}
		}},
		{"accounts", []string{"id", "user_id", "type", "provider", "provider_account_id", "created_at"}, sz.Users, func(i int) []any {
			return []any{fmt.Sprintf("00000000-0000-4000-8001-%012d", i), UserID(i), "oauth", "github", fmt.Sprint(i), base.Add(time.Duration(i) * ms)}
		}},
		{"sessions", []string{"id", "token_hash", "user_id", "expires", "created_at", "amr", "device", "network", "last_seen"}, sz.Sessions, func(i int) []any {
			exp := now.Add(30*24*time.Hour - time.Duration(i%1000)*time.Minute)
			if i%2 == 1 {
				exp = now.Add(-time.Hour - time.Duration(i%1000)*time.Minute)
			}
			at := exp.Add(-30 * 24 * time.Hour)
			return []any{SessionID(i), TokenHash(SessionToken(i)), UserID(SessionUser(i, sz)),
				exp, at, "email", "Firefox 128 on Linux", "192.0.2.0/24", at}
		}},
		{"passwords", []string{"user_id", "hash", "updated_at"}, sz.Users / 10, func(i int) []any {
			return []any{UserID(i * 10), PasswordHash, base}
		}},
		{"user_groups", []string{"user_id", "name", "created_at"}, sz.Users / 10, func(i int) []any {
			return []any{UserID(i * 10), "staff", base}
		}},
		{"verification_tokens", []string{"identifier", "token_hash", "expires"}, sz.Tokens, func(i int) []any {
			exp := now.Add(-time.Duration(1+i%1000) * time.Minute)
			if i%10 == 0 {
				exp = now.Add(time.Hour)
			}
			return []any{Email(i % sz.Users), TokenHash(fmt.Sprintf("scale-link-%d", i)), exp}
		}},
		{"rate_limits", []string{"bucket", "full_at"}, sz.RateLimits, func(i int) []any {
			return []any{fmt.Sprintf("email:%s", TokenHash(fmt.Sprint(i))), now.Add(time.Duration(i%7200) * time.Second).UnixMicro()}
		}},
		{"session_revocations", []string{"user_id", "not_before"}, sz.Revocations, func(i int) []any {
			// Older than every live session's sign-in: they end none of the
			// sessions a bench signs in with.
			return []any{UserID((i * 97) % sz.Users), now.Add(-31*24*time.Hour - time.Duration(i)*time.Second).Unix()}
		}},
		{"sign_ins", []string{"id", "user_id", "created_at", "last_seen", "expires", "ended_at"}, sz.SignIns, func(i int) []any {
			at := now.Add(-time.Duration(i%(60*24*30)) * time.Minute)
			var ended any
			if i%100 == 0 {
				ended = at.Add(time.Minute)
			}
			return []any{fmt.Sprintf("scale-signin-%d", i), UserID(i % sz.Users), at, at, at.Add(30 * 24 * time.Hour), ended}
		}},
		{"webhook_deliveries", []string{"event_id", "endpoint", "type", "body", "status", "attempts", "next_at", "created_at", "delivered_at"}, sz.Webhooks, func(i int) []any {
			at := now.Add(-time.Duration(i) * time.Second)
			return []any{fmt.Sprintf("msg_scale%d", i), "app", "session.created", `{"type":"session.created"}`, "delivered", 1, at, at, at}
		}},
	}
	for _, t := range tables {
		if err := insert(ctx, s, t, progress); err != nil {
			return err
		}
	}
	if s.Dialect() == models.DialectPostgres {
		return s.DB().WithContext(ctx).Exec("VACUUM ANALYZE").Error
	}
	return s.DB().WithContext(ctx).Exec("ANALYZE").Error
}

// insert writes t's rows: by COPY on PostgreSQL (copy.go), else in
// statements of as many rows as SQLite's bound parameters allow, many
// statements per transaction.
func insert(ctx context.Context, s *models.Store, t table, progress func(string, int)) error {
	if t.n <= 0 {
		return nil
	}
	if s.Dialect() == models.DialectPostgres {
		return copyRows(ctx, s, t, progress)
	}
	per := 30000 / len(t.cols) // SQLite allows 32766 parameters
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(t.cols)), ",") + ")"
	head := "INSERT INTO " + t.name + " (" + strings.Join(t.cols, ",") + ") VALUES "
	const perTx = 100_000
	for start := 0; start < t.n; start += perTx {
		end := min(t.n, start+perTx)
		err := s.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// A page cache the size of the indexes being filled: inserting
			// random token hashes into a B-tree of millions of entries
			// otherwise reads most of its pages back from the file for every
			// batch. The pragma holds for this transaction's connection.
			if err := tx.Exec("PRAGMA cache_size = -1048576").Error; err != nil {
				return err
			}
			for lo := start; lo < end; lo += per {
				hi := min(end, lo+per)
				vals := make([]any, 0, (hi-lo)*len(t.cols))
				for i := lo; i < hi; i++ {
					vals = append(vals, t.row(i)...)
				}
				q := head + strings.TrimSuffix(strings.Repeat(one+",", hi-lo), ",")
				if err := tx.Exec(q, vals...).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("fill %s: %w", t.name, err)
		}
		if progress != nil {
			progress(t.name, end)
		}
	}
	return nil
}
