package models

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

// TestMigrationsMatchModels: after the numbered steps, every table, column
// and index the GORM models declare exists, on both dialects. The feature
// packages' models (models/<feature>store) are checked by their own test of
// this name, through storetest.RequireMigrated.
func TestMigrationsMatchModels(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		s := connect(t, c)
		m := s.db.Migrator()
		for _, model := range []any{&User{}, &Account{}, &Session{}, &VerificationToken{}, &RateLimit{}, &SessionRevocation{}, &Password{}, &Authenticator{}, &UsedChallenge{}} {
			stmt := &gorm.Statement{DB: s.db}
			require.NoError(t, stmt.Parse(model))
			require.True(t, m.HasTable(model), stmt.Schema.Table)
			for _, f := range stmt.Schema.Fields {
				if f.DBName != "" {
					require.True(t, m.HasColumn(model, f.DBName), "%s.%s", stmt.Schema.Table, f.DBName)
				}
			}
			for _, idx := range stmt.Schema.ParseIndexes() {
				require.True(t, m.HasIndex(model, idx.Name), "%s index %s", stmt.Schema.Table, idx.Name)
			}
		}
		st, err := s.Status(context.Background())
		require.NoError(t, err)
		require.Equal(t, SchemaVersion(), st.Applied)
		require.Empty(t, st.Pending)
	})
}

// TestMigrationsRace: several instances starting at once on one database
// apply each step once and all start.
func TestMigrationsRace(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		const n = 4
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				s, err := Connect(c)
				if err == nil {
					_ = s.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		s := connect(t, c)
		var rows int64
		require.NoError(t, s.db.Model(&schemaMigration{}).Count(&rows).Error)
		require.EqualValues(t, len(Versions()), rows, "each step recorded once")
	})
}

// TestNewerSchemaRefused: a database migrated by a newer latchkey is not
// touched: one clear error naming the fix.
func TestNewerSchemaRefused(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		s := connect(t, c)
		require.NoError(t, s.db.Create(&schemaMigration{Version: SchemaVersion() + 1, Name: "from the future", AppliedAt: s.db.NowFunc()}).Error)
		_, err := Connect(c)
		require.True(t, errors.Is(err, ErrSchemaTooNew), "err %v", err)
		require.ErrorContains(t, err, "run the newer latchkey")
	})
}

// TestStatusBeforeMigrating lists every step as pending on an empty
// database and changes nothing.
func TestStatusBeforeMigrating(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		c.SkipMigrate = true
		s := connect(t, c)
		st, err := s.Status(context.Background())
		require.NoError(t, err)
		require.Zero(t, st.Applied)
		require.Len(t, st.Pending, len(migrations))
		require.False(t, s.db.Migrator().HasTable(&User{}), "status changes nothing")
	})
}

// TestAdoptAutoMigrateDatabase: a SQLite file made by the earlier
// AutoMigrate (tables, rows, no history) is adopted as version 1 and
// brought up to date with its rows intact.
func TestAdoptAutoMigrateDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := gorm.Open(sqlite.Open(path), &gorm.Config{})
	require.NoError(t, err)
	require.NoError(t, old.AutoMigrate(&User{}, &Account{}, &Session{}, &VerificationToken{}))
	require.NoError(t, old.Exec("DROP INDEX idx_verification_tokens_token_hash").Error) // as before that index existed
	// As before steps 8 and 9 added them:
	for _, col := range []string{"sessions.amr", "sessions.device", "sessions.network", "sessions.last_seen", "accounts.label"} {
		table, column, _ := strings.Cut(col, ".")
		require.NoError(t, old.Exec("ALTER TABLE "+table+" DROP COLUMN "+column).Error, col)
	}
	email := "kept@example.com"
	uid := NewID()
	require.NoError(t, old.Create(&User{ID: uid, Email: &email}).Error)
	require.NoError(t, old.Exec("INSERT INTO sessions (id, token_hash, user_id, expires, created_at) VALUES (?, ?, ?, ?, ?)",
		NewID(), "old-session", uid, time.Now().Add(time.Hour).UTC(), time.Now().UTC()).Error)
	sqlDB, _ := old.DB()
	require.NoError(t, sqlDB.Close())

	s := connect(t, Config{Dialect: DialectSQLite, DSN: path})
	st, err := s.Status(context.Background())
	require.NoError(t, err)
	require.Equal(t, SchemaVersion(), st.Applied)
	var adopted schemaMigration
	require.NoError(t, s.db.First(&adopted, "version = 1").Error)
	require.Contains(t, adopted.Name, "adopted")
	require.True(t, s.db.Migrator().HasIndex(&VerificationToken{}, "idx_verification_tokens_token_hash"))
	u, err := s.UserByEmail(context.Background(), email)
	require.NoError(t, err)
	require.Equal(t, email, *u.Email)
	var row SessionRow
	require.NoError(t, s.ReadSession(context.Background(), "old-session", &row), "a session from before step 8 is read")
	require.Empty(t, row.AMR, "its sign-in methods are unknown")
	list, err := s.SessionsOf(context.Background(), uid)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Empty(t, list[0].Device, "a session from before step 9 has no device")
	require.Nil(t, list[0].LastSeen)
}
