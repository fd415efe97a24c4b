package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

// open returns a store on a fresh SQLite file with the schema applied.
func open(t *testing.T) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "latchkey.db"))
}

// openAt opens the SQLite file at path as Open does.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	return connect(t, Config{Dialect: DialectSQLite, DSN: path})
}

func ptr(s string) *string { return &s }

func newUser(t *testing.T, s *Store, email string) *User {
	t.Helper()
	u := &User{ID: NewID(), Name: ptr("N")}
	if email != "" {
		u.Email = &email
	}
	require.NoError(t, s.db.Create(u).Error)
	return u
}

// requireUnique: a unique constraint refused the row (GORM translates the
// driver's error, so this holds for any dialect).
func requireUnique(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, gorm.ErrDuplicatedKey)
}

func count(t *testing.T, s *Store, table string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, s.db.Table(table).Count(&n).Error)
	return n
}

func TestOpenPragmas(t *testing.T) {
	s := open(t)
	var mode string
	require.NoError(t, s.db.Raw("PRAGMA journal_mode").Scan(&mode).Error)
	require.Equal(t, "wal", strings.ToLower(mode))
	var fk int
	require.NoError(t, s.db.Raw("PRAGMA foreign_keys").Scan(&fk).Error)
	require.Equal(t, 1, fk)
	var busy int
	require.NoError(t, s.db.Raw("PRAGMA busy_timeout").Scan(&busy).Error)
	require.GreaterOrEqual(t, busy, 1000)
}

// TestPostgresConnectionSettings is TestOpenPragmas' counterpart: every
// statement is bounded by statement_timeout (10 s, the configured value, or
// the DSN's own), so a stuck query cannot hold a request for ever, and the
// pool keeps to its budget.
func TestPostgresConnectionSettings(t *testing.T) {
	base := freshConfig(t, DialectPostgres)
	for _, tc := range []struct {
		name    string
		change  func(*Config)
		timeout string
		maxOpen int
	}{
		{"defaults", func(*Config) {}, "10s", 20},
		{"configured", func(c *Config) { c.StatementTimeout, c.MaxOpen = 1500*time.Millisecond, 3 }, "1500ms", 3},
		{"in the DSN", func(c *Config) { c.DSN += "&statement_timeout=2000"; c.StatementTimeout = time.Minute }, "2s", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.change(&c)
			s := connect(t, c)
			var got string
			require.NoError(t, s.db.Raw("SHOW statement_timeout").Scan(&got).Error)
			require.Equal(t, tc.timeout, got)
			sqlDB, err := s.db.DB()
			require.NoError(t, err)
			require.Equal(t, tc.maxOpen, sqlDB.Stats().MaxOpenConnections)
		})
	}
	t.Run("a stuck statement is cut off", func(t *testing.T) {
		c := base
		c.StatementTimeout = 200 * time.Millisecond
		s := connect(t, c)
		started := time.Now()
		err := s.db.Exec("SELECT pg_sleep(5)").Error
		require.ErrorContains(t, err, "statement timeout")
		require.Less(t, time.Since(started), 4*time.Second)
	})
}

func TestSchemaAndReopen(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		if c.Dialect == DialectSQLite {
			c.DSN = filepath.Join(t.TempDir(), "sub", "dir", "latchkey.db") // folders are created
		}
		s, err := Connect(c)
		require.NoError(t, err)
		for _, table := range []string{"users", "accounts", "sessions", "verification_tokens"} {
			require.True(t, s.db.Migrator().HasTable(table), table)
		}
		u := newUser(t, s, "keep@example.com")
		require.NoError(t, s.Close())

		// Re-opening migrates again without losing data.
		s = connect(t, c)
		var got User
		require.NoError(t, s.db.First(&got, "id = ?", u.ID).Error)
		require.Equal(t, "keep@example.com", *got.Email)
		require.NoError(t, s.Migrate(context.Background()))
	})
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, id)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestUniqueEmail(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		newUser(t, s, "a@example.com")
		err := s.db.Create(&User{ID: NewID(), Email: ptr("a@example.com")}).Error
		requireUnique(t, err)
		// Users without an e-mail (OAuth accounts that share none) do not collide.
		newUser(t, s, "")
		newUser(t, s, "")
		require.EqualValues(t, 3, count(t, s, "users"))
	})
}

// TestUserByEmailIgnoresCase: addresses are stored lower-cased (OAuth
// profiles and e-mail sign-ins normalise them) and UserByEmail lower-cases
// what it is given, so any spelling finds the user; neither dialect folds
// case itself (no NOCASE, no citext), so the answers are the same.
func TestUserByEmailIgnoresCase(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "mixed.case@example.com")
		for _, spelling := range []string{"mixed.case@example.com", "Mixed.Case@Example.COM", "MIXED.CASE@EXAMPLE.COM"} {
			got, err := s.UserByEmail(ctx, spelling)
			require.NoError(t, err, spelling)
			require.Equal(t, u.ID, got.ID, spelling)
		}
		_, err := s.UserByEmail(ctx, "mixed.case@example.co")
		require.ErrorIs(t, err, ErrNotFound)
		// An e-mail link redeemed for the address finds the same user.
		require.NoError(t, s.CreateVerificationToken(ctx, "mixed.case@example.com", "h", time.Now().Add(time.Hour)))
		got, isNew, err := s.RedeemVerificationToken(ctx, "mixed.case@example.com", "h", time.Now())
		require.NoError(t, err)
		require.False(t, isNew)
		require.Equal(t, u.ID, got.ID)
	})
}

func TestUniqueProviderAccount(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u1, u2 := newUser(t, s, "1@example.com"), newUser(t, s, "2@example.com")
		require.NoError(t, s.LinkAccount(ctx, &Account{UserID: u1.ID, Type: "oauth", Provider: "github", ProviderAccountID: "42"}))
		// The same id at another provider is another identity.
		require.NoError(t, s.LinkAccount(ctx, &Account{UserID: u2.ID, Type: "oauth", Provider: "gitlab", ProviderAccountID: "42"}))
		// The same identity cannot be linked twice, to anyone.
		err := s.LinkAccount(ctx, &Account{UserID: u2.ID, Type: "oauth", Provider: "github", ProviderAccountID: "42"})
		require.ErrorIs(t, err, ErrConflict)
		requireUnique(t, s.db.Omit("User").Create(&Account{ID: NewID(), UserID: u1.ID, Type: "oauth", Provider: "github", ProviderAccountID: "42"}).Error)
		require.EqualValues(t, 2, count(t, s, "accounts"))
	})
}

func TestCreateUserWithAccountIsAtomic(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := &User{Email: ptr("first@example.com")}
		require.NoError(t, s.CreateUserWithAccount(ctx, u, &Account{Type: "oauth", Provider: "github", ProviderAccountID: "1"}))
		require.NotEmpty(t, u.ID)

		// The account collides: the new user must not be left behind.
		err := s.CreateUserWithAccount(ctx, &User{Email: ptr("second@example.com")},
			&Account{Type: "oauth", Provider: "github", ProviderAccountID: "1"})
		require.ErrorIs(t, err, ErrConflict)
		// The e-mail collides: no account is created.
		err = s.CreateUserWithAccount(ctx, &User{Email: ptr("first@example.com")},
			&Account{Type: "oauth", Provider: "github", ProviderAccountID: "2"})
		require.ErrorIs(t, err, ErrConflict)
		require.EqualValues(t, 1, count(t, s, "users"))
		require.EqualValues(t, 1, count(t, s, "accounts"))
	})
}

func TestUniqueSessionTokenHash(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "s@example.com")
		exp := time.Now().Add(time.Hour)
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "hash-1", SignedIn: time.Now(), Expires: exp}))
		err := s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "hash-1", SignedIn: time.Now(), Expires: exp})
		requireUnique(t, err)
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "hash-2", SignedIn: time.Now(), Expires: exp}), "a user may hold several sessions")
		require.EqualValues(t, 2, count(t, s, "sessions"))
	})
}

func TestUniqueVerificationIdentifierToken(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		exp := time.Now().Add(time.Hour)
		require.NoError(t, s.db.Create(&VerificationToken{Identifier: "a@example.com", TokenHash: "t1", Expires: exp}).Error)
		requireUnique(t, s.db.Create(&VerificationToken{Identifier: "a@example.com", TokenHash: "t1", Expires: exp}).Error)
		require.NoError(t, s.db.Create(&VerificationToken{Identifier: "a@example.com", TokenHash: "t2", Expires: exp}).Error)
		// The hash alone is unique too: the e-mail link is looked up by it.
		requireUnique(t, s.db.Create(&VerificationToken{Identifier: "b@example.com", TokenHash: "t1", Expires: exp}).Error)
		require.EqualValues(t, 2, count(t, s, "verification_tokens"))
	})
}

func TestForeignKeys(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		err := s.CreateSession(ctx, NewSession{UserID: NewID(), TokenHash: "orphan", SignedIn: time.Now(), Expires: time.Now().Add(time.Hour)})
		require.Error(t, err, "a session needs an existing user")
		require.ErrorIs(t, err, gorm.ErrForeignKeyViolated)

		u := newUser(t, s, "gone@example.com")
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "h", SignedIn: time.Now(), Expires: time.Now().Add(time.Hour)}))
		require.NoError(t, s.LinkAccount(ctx, &Account{UserID: u.ID, Type: "oauth", Provider: "github", ProviderAccountID: "9"}))
		require.NoError(t, s.db.Delete(&User{}, "id = ?", u.ID).Error)
		require.Zero(t, count(t, s, "sessions"), "sessions go with their user")
		require.Zero(t, count(t, s, "accounts"), "accounts go with their user")
	})
}

func TestSessionMethods(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "m@example.com")
		exp := time.Date(2031, 3, 4, 5, 6, 7, 890_000_000, time.FixedZone("CET", 3600))
		signedIn := time.Date(2031, 2, 1, 9, 8, 7, 654_000_000, time.FixedZone("PST", -8*3600))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "h1", SignedIn: signedIn, Expires: exp}))

		row, err := s.SessionAndUser(ctx, "h1")
		require.NoError(t, err)
		require.Equal(t, "h1", row.TokenHash)
		require.Equal(t, u.ID, row.UserID)
		require.Equal(t, u.ID, row.User.ID, "the user comes in the same query")
		require.Equal(t, "m@example.com", *row.User.Email)
		require.True(t, exp.Equal(row.Expires), "expiry round-trips to the millisecond: %v", row.Expires)
		require.True(t, signedIn.Equal(row.CreatedAt), "the sign-in time (the caller's clock) comes in the same query: %v", row.CreatedAt)
		all, err := s.SessionsOf(ctx, u.ID)
		require.NoError(t, err)
		require.Len(t, all, 1)
		require.Len(t, all[0].ID, 36)

		_, err = s.SessionAndUser(ctx, "missing")
		require.ErrorIs(t, err, ErrNotFound)

		later := exp.Add(48 * time.Hour)
		require.NoError(t, s.ExtendSession(ctx, "h1", later, time.Now()))
		row, err = s.SessionAndUser(ctx, "h1")
		require.NoError(t, err)
		require.True(t, later.Equal(row.Expires))
		require.True(t, signedIn.Equal(row.CreatedAt), "extending never moves the sign-in time")

		// A row without created_at (a hand edit) reads as an unknown sign-in, not an error.
		require.NoError(t, s.db.Exec("UPDATE sessions SET created_at = NULL WHERE token_hash = ?", "h1").Error)
		row, err = s.SessionAndUser(ctx, "h1")
		require.NoError(t, err)
		require.True(t, row.CreatedAt.IsZero())

		require.NoError(t, s.DeleteSession(ctx, "h1"))
		require.NoError(t, s.DeleteSession(ctx, "h1"), "deleting a missing session is fine")
		_, err = s.SessionAndUser(ctx, "h1")
		require.True(t, errors.Is(err, ErrNotFound))

		for i := range 3 {
			require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: fmt.Sprint("u", i), SignedIn: time.Now(), Expires: exp}))
		}
		other := newUser(t, s, "o@example.com")
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: other.ID, TokenHash: "o", SignedIn: time.Now(), Expires: exp}))
		require.NoError(t, s.DeleteUserSessions(ctx, u.ID))
		require.EqualValues(t, 1, count(t, s, "sessions"))
	})
}

// ReadSession into one reused row (as GET /session does): every lookup
// overwrites every field, NULLs included, so nothing of the previous
// user shows through; a copied row scans into itself, not the original.
func TestReadSessionReusesRow(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		exp := time.Now().Add(time.Hour)
		full := &User{ID: NewID(), Name: ptr("Full"), Email: ptr("full@example.com"), Image: ptr("https://img.example.com/f.png")}
		bare := &User{ID: NewID()}
		require.NoError(t, s.db.Create(full).Error)
		require.NoError(t, s.db.Create(bare).Error)
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: full.ID, TokenHash: "full", SignedIn: time.Now(), Expires: exp}))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: bare.ID, TokenHash: "bare", SignedIn: time.Now(), Expires: exp}))
		require.NoError(t, s.db.Exec("UPDATE sessions SET created_at = NULL WHERE token_hash = ?", "bare").Error)

		var row SessionRow
		require.NoError(t, s.ReadSession(ctx, "full", &row))
		require.Equal(t, full.ID, row.UserID)
		require.Equal(t, sql.NullString{String: "Full", Valid: true}, row.Name)
		require.Equal(t, sql.NullString{String: "https://img.example.com/f.png", Valid: true}, row.Image)
		require.True(t, row.CreatedAt.Valid)

		require.NoError(t, s.ReadSession(ctx, "bare", &row))
		require.Equal(t, bare.ID, row.UserID)
		require.False(t, row.Name.Valid)
		require.False(t, row.Email.Valid)
		require.False(t, row.Image.Valid)
		require.False(t, row.CreatedAt.Valid)
		require.True(t, row.CreatedAt.Time.IsZero())

		require.ErrorIs(t, s.ReadSession(ctx, "missing", &row), ErrNotFound)

		copied := row
		require.NoError(t, s.ReadSession(ctx, "full", &copied))
		require.Equal(t, full.ID, copied.UserID)
		require.Equal(t, bare.ID, row.UserID, "the original row is untouched")
	})
}

// GET /session's lookup on SQLite stays within its allocation budget: the
// statement's shape (CAST text columns, columns named "") saves a dozen
// allocations per query in mattn/go-sqlite3 (27 in all with it, 41
// without), and this test notices when a change to the statement, the
// driver or database/sql gives them back.
func TestReadSessionAllocations(t *testing.T) {
	s := connect(t, freshConfig(t, DialectSQLite))
	ctx := context.Background()
	u := &User{ID: NewID(), Name: ptr("Name"), Email: ptr("a@example.com"), Image: ptr("https://img.example.com/a.png")}
	require.NoError(t, s.db.Create(u).Error)
	require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "h", SignedIn: time.Now(), Expires: time.Now().Add(time.Hour)}))
	var row SessionRow
	allocs := testing.AllocsPerRun(200, func() {
		if err := s.ReadSession(ctx, "h", &row); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 30.0, "allocations per session lookup")
}

func TestPurgeExpired(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		u := newUser(t, s, "p@example.com")
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "old", SignedIn: time.Now(), Expires: now.Add(-time.Second)}))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "new", SignedIn: time.Now(), Expires: now.Add(time.Second)}))
		require.NoError(t, s.db.Create(&VerificationToken{Identifier: "x", TokenHash: "old", Expires: now.Add(-time.Minute)}).Error)
		require.NoError(t, s.db.Create(&VerificationToken{Identifier: "x", TokenHash: "new", Expires: now.Add(time.Minute)}).Error)
		n, err := s.PurgeExpired(ctx, now)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		_, err = s.SessionAndUser(ctx, "new")
		require.NoError(t, err)
		_, err = s.SessionAndUser(ctx, "old")
		require.ErrorIs(t, err, ErrNotFound)
		require.EqualValues(t, 1, count(t, s, "verification_tokens"))
		require.EqualValues(t, 1, count(t, s, "users"))
	})
}

// TestConcurrentWriters: many goroutines, and two handles on the same
// database (as two processes, or two instances, would have), write at once
// without "database is locked" or any other failure.
func TestConcurrentWriters(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		a := connect(t, c)
		b := connect(t, c)
		ctx := context.Background()
		users := make([]*User, 50)
		for i := range users {
			users[i] = newUser(t, a, fmt.Sprintf("c%d@example.com", i))
		}

		const writers = 50
		errs := make(chan error, writers*4)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range writers {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				<-start
				u := users[i]
				hash := fmt.Sprintf("hash-%d", i)
				exp := time.Now().Add(time.Hour)
				if err := s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: hash, SignedIn: time.Now(), Expires: exp}); err != nil {
					errs <- fmt.Errorf("create %d: %w", i, err)
					return
				}
				row, err := s.SessionAndUser(ctx, hash)
				if err != nil {
					errs <- fmt.Errorf("read %d: %w", i, err)
					return
				}
				if err := s.ExtendSession(ctx, row.TokenHash, exp.Add(time.Hour), time.Now()); err != nil {
					errs <- fmt.Errorf("extend %d: %w", i, err)
				}
				if i%5 == 0 {
					if err := s.DeleteSession(ctx, hash); err != nil {
						errs <- fmt.Errorf("delete %d: %w", i, err)
					}
				}
				if err := s.LinkAccount(ctx, &Account{UserID: u.ID, Type: "oauth", Provider: "github", ProviderAccountID: fmt.Sprint(i)}); err != nil {
					errs <- fmt.Errorf("link %d: %w", i, err)
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NotContains(t, err.Error(), "locked")
			require.NoError(t, err)
		}
		require.EqualValues(t, writers-writers/5, count(t, a, "sessions"))
		require.EqualValues(t, writers, count(t, b, "accounts"))
	})
}
