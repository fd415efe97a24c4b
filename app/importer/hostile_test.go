package importer_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/importer"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/importstore"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

// Rows latchkey cannot keep as they are — a value that is not text (a NUL
// byte, invalid UTF-8: SQLite stores them, PostgreSQL refuses them), one
// too long for latchkey's indexes, a time that is not one — are skipped
// with a reason that does not repeat them, on both databases; the rows
// around them come in, and the import runs to its end instead of stopping
// at the same batch on every run.
func TestImportSkipsRowsLatchkeyCannotKeep(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	later := now.Add(24 * time.Hour).Format(time.RFC3339Nano)
	long := strings.Repeat("l", 3000)
	for _, u := range [][4]any{
		{"ok", "Ok", "ok@example.com", nil},
		{"badname", "\xff", "badname@example.com", nil},
		{"nul", "Nul", "nul\x00@example.com", nil},
		{"long", "Long", long + "@example.com", nil},
		{"baddate", "Date", "date@example.com", "last tuesday"},
		{"\xfe", "Bad id", "badid@example.com", nil},
	} {
		n.exec(t, `INSERT INTO users (id, name, email, "emailVerified") VALUES (?, ?, ?, ?)`, u[:]...)
	}
	for _, a := range [][4]string{
		{"a1", "ok", "idp", "ok-sub"},
		{"a2", "ok", "idp", long},
		{"a3", "ok", "\x00idp", "sub"},
		{"a4", "\xfe", "idp", "other-sub"},
	} {
		n.exec(t, `INSERT INTO accounts (id, "userId", type, provider, "providerAccountId") VALUES (?, ?, 'oidc', ?, ?)`, a[0], a[1], a[2], a[3])
	}
	for _, s := range [][3]string{
		{"ok", "token-ok", later},
		{"ok", "token-bad-date", "someday"},
		{"\xfe", "token-bad-user", later},
	} {
		n.exec(t, `INSERT INTO sessions (id, "userId", expires, "sessionToken") VALUES (?, ?, ?, ?)`, s[1], s[0], s[2], s[1])
	}
	for _, v := range [][2]string{
		{"ok@example.com", hashA},
		{long + "@example.com", strings.Repeat("c", 64)},
		{"nul@example.com", strings.Repeat("\x00", 64)},
	} {
		n.exec(t, `INSERT INTO verification_token (identifier, expires, token) VALUES (?, ?, ?)`, v[0], later, v[1])
	}

	check := func(t *testing.T, st *models.Store) {
		for range 2 { // a second run judges the same
			sum := run(t, n, st, importer.Options{Providers: []string{"idp"}})
			require.Equal(t, 1, sum.Users.Imported+sum.Users.There, "%+v", sum.Users)
			require.Equal(t, 5, sum.Users.Skipped)
			require.Equal(t, 1, sum.Accounts.Imported+sum.Accounts.There, "%+v", sum.Accounts)
			require.Equal(t, 3, sum.Accounts.Skipped)
			require.Equal(t, 1, sum.Sessions.Imported+sum.Sessions.There, "%+v", sum.Sessions)
			require.Equal(t, 2, sum.Sessions.Skipped)
			require.Equal(t, 1, sum.Tokens.Imported+sum.Tokens.There, "%+v", sum.Tokens)
			require.Equal(t, 2, sum.Tokens.Skipped)
			require.Contains(t, sum.Skipped, importer.Skip{Table: "users", Key: "baddate", Reason: "emailVerified is not a time", N: 1})
			require.Contains(t, sum.Skipped, importer.Skip{Table: "sessions", Key: "of user ok", Reason: "expires is not a time", N: 1})
			for _, k := range sum.Skipped {
				for _, s := range []string{k.Key, k.Reason} {
					require.True(t, utf8.ValidString(s) && !strings.ContainsRune(s, 0), "%q", s)
					require.NotContains(t, s, "lll", "a value too long is not repeated")
				}
			}
		}
		ctx := context.Background()
		u, err := st.UserByAccount(ctx, "idp", "ok-sub")
		require.NoError(t, err)
		require.Equal(t, "ok", u.ID)
		var row models.SessionRow
		require.NoError(t, st.ReadSession(ctx, session.HashToken("token-ok"), &row))
		_, err = st.VerificationTokenByHash(ctx, hashA)
		require.NoError(t, err)
		for _, email := range []string{"badname@example.com", "date@example.com", "badid@example.com"} {
			_, err := st.UserByEmail(ctx, email)
			require.ErrorIs(t, err, models.ErrNotFound, email)
		}
	}
	t.Run("sqlite", func(t *testing.T) { check(t, target(t)) })
	t.Run("postgres", func(t *testing.T) { check(t, pgTarget(t)) })
}

// A batch as large as --batch-size allows (100 000) is looked up whole:
// each lookup binds its keys in pieces, within SQLite's 32 766 variables a
// statement and PostgreSQL's 65 535 (an account binds two). A dry run
// makes every lookup of a real one and writes nothing, so it is quick.
func TestImportLargeBatches(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	n.exec(t, `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 35000)
		INSERT INTO users (id, email) SELECT 'u' || i, 'u' || i || '@example.com' FROM c`)
	n.exec(t, `INSERT INTO accounts (id, "userId", type, provider, "providerAccountId") SELECT 'a' || id, id, 'oidc', 'idp', id FROM users`)
	check := func(t *testing.T, st *models.Store) {
		sum := run(t, n, st, importer.Options{BatchSize: 100_000, DryRun: true})
		require.Equal(t, importer.Count{Read: 35000, Imported: 35000}, sum.Users)
		require.Equal(t, importer.Count{Read: 35000, Imported: 35000}, sum.Accounts)
	}
	t.Run("sqlite", func(t *testing.T) { check(t, target(t)) })
	t.Run("postgres", func(t *testing.T) { check(t, pgTarget(t)) })
}

// pgTarget is a fresh latchkey database on PostgreSQL.
func pgTarget(t *testing.T) *models.Store {
	t.Helper()
	st, err := models.Connect(models.Config{Dialect: models.DialectPostgres, DSN: pgtest.NewDatabase(t, pg.URL(t))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// A name comes in as an OAuth sign-in keeps one (app/oauth's ShownName):
// cut at 256 characters, without control characters. A 64 KiB name in
// the user's jwt session cookie would take it past what browsers keep,
// and the user could no longer sign in.
func TestImportCutsNamesAsSignInDoes(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	n.exec(t, `INSERT INTO users (id, name, email) VALUES ('long', ?, 'long@example.com'), ('ctl', ?, 'ctl@example.com')`,
		strings.Repeat("é", 60_000), " A\x1b[2Jda ")
	check := func(t *testing.T, st *models.Store) {
		sum := run(t, n, st, importer.Options{})
		require.Equal(t, 2, sum.Users.Imported, "%+v", sum.Skipped)
		for id, want := range map[string]string{"long": strings.Repeat("é", 256), "ctl": "A[2Jda"} {
			u, err := st.UserByID(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, want, *u.Name, id)
		}
	}
	t.Run("sqlite", func(t *testing.T) { check(t, target(t)) })
	t.Run("postgres", func(t *testing.T) { check(t, pgTarget(t)) })
}

// signUpMeanwhile is latchkey's database while a user signs up on it with
// an address the import has just looked up: the sign-up takes the e-mail
// between the import's lookup and its write.
type signUpMeanwhile struct {
	*importstore.Target
	t     *testing.T
	st    *models.Store
	email string
	done  bool
}

func (s *signUpMeanwhile) UsersByEmail(ctx context.Context, emails []string) (map[string]string, error) {
	found, err := s.Target.UsersByEmail(ctx, emails)
	if !s.done {
		s.done = true
		storetest.NewUser(s.t, s.st, s.email)
	}
	return found, err
}

// A row the write leaves out (the sign-up took its e-mail meanwhile) is
// counted as skipped, not imported, and is not recorded in the import
// ledger: once the conflict is gone, the next run brings it in instead of
// skipping it as "deleted in latchkey since an earlier import".
func TestImportRecordsOnlyWhatItWrote(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	n.exec(t, `INSERT INTO users (id, email) VALUES ('ann', 'ann@example.com'), ('bob', 'bob@example.com')`)
	n.exec(t, `INSERT INTO accounts (id, "userId", type, provider, "providerAccountId") VALUES ('a1', 'ann', 'oidc', 'idp', 'ann-sub')`)
	check := func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		src, err := importstore.Open(ctx, n.from, "")
		require.NoError(t, err)
		defer src.Close()
		dst := &signUpMeanwhile{Target: importstore.NewTarget(st), t: t, st: st, email: "ann@example.com"}
		sum, err := importer.Run(ctx, src, dst, importer.Options{Now: func() time.Time { return now }})
		require.NoError(t, err)
		require.Equal(t, importer.Count{Read: 2, Imported: 1, Skipped: 1}, sum.Users)
		require.Equal(t, importer.Count{Read: 1, Skipped: 1}, sum.Accounts)
		require.Contains(t, sum.Skipped, importer.Skip{Table: "users", Key: "ann", N: 1,
			Reason: "latchkey took its e-mail or identity while the import ran (a sign-up or sign-in meanwhile)"})

		// The sign-up goes; the next run brings ann in.
		require.NoError(t, st.DB().Exec("DELETE FROM users WHERE email = ?", "ann@example.com").Error)
		sum = run(t, n, st, importer.Options{})
		require.Equal(t, importer.Count{Read: 2, Imported: 1, There: 1}, sum.Users, "%+v", sum.Skipped)
		require.Equal(t, importer.Count{Read: 1, Imported: 1}, sum.Accounts, "%+v", sum.Skipped)
	}
	t.Run("sqlite", func(t *testing.T) { check(t, target(t)) })
	t.Run("postgres", func(t *testing.T) { check(t, pgTarget(t)) })
}

// An image comes in as a sign-in keeps one (app/oauth): an http(s) URL of
// at most 2 KiB, or a path on the app's own origin (a next-auth app may
// store "/avatars/1.png"); anything else is dropped, the user kept. A
// 64 KiB image would ride in the user's jwt session cookie, past what
// browsers keep, and the user could no longer sign in.
func TestImportKeepsImagesAsSignInDoes(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	keep := map[string]string{
		"url":  "https://img.example/a.png",
		"path": "/avatars/1.png?v=2",
	}
	drop := map[string]string{
		"huge":     "https://img.example/" + strings.Repeat("a", 64<<10-30),
		"long":     "https://img.example/" + strings.Repeat("a", 2100),
		"data":     "data:image/png;base64," + strings.Repeat("A", 100),
		"js":       "javascript:alert(1)",
		"protorel": "//evil.example/a.png",
		"slashes":  `/\evil.example/a.png`,
		"ctl":      "https://img.example/\x1b[2J.png",
		"nul":      "https://img.example/\x00.png",
	}
	for id, img := range keep {
		n.exec(t, `INSERT INTO users (id, email, image) VALUES (?, ?, ?)`, id, id+"@example.com", img)
	}
	for id, img := range drop {
		n.exec(t, `INSERT INTO users (id, email, image) VALUES (?, ?, ?)`, id, id+"@example.com", img)
	}
	check := func(t *testing.T, st *models.Store) {
		sum := run(t, n, st, importer.Options{})
		require.Equal(t, len(keep)+len(drop), sum.Users.Imported, "%+v", sum.Skipped)
		require.Equal(t, len(drop), sum.ImagesDropped)
		for id, want := range keep {
			u, err := st.UserByID(context.Background(), id)
			require.NoError(t, err)
			require.NotNil(t, u.Image, id)
			require.Equal(t, want, *u.Image, id)
		}
		for id := range drop {
			u, err := st.UserByID(context.Background(), id)
			require.NoError(t, err, id)
			require.Nil(t, u.Image, id)
		}
	}
	t.Run("sqlite", func(t *testing.T) { check(t, target(t)) })
	t.Run("postgres", func(t *testing.T) { check(t, pgTarget(t)) })
}
