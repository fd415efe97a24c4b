package importer_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/importer"
	"github.com/latchkey-auth/latchkey/app/providertokens"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/importstore"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/storetest"
	"github.com/latchkey-auth/latchkey/models/tokenstore"
)

var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// now is the tests' clock: rows expiring before it are expired.
var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

const hashA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// nextAuthDB is a next-auth database: the adapter's four tables under
// one naming, in one dialect, with the rows an adapter writes.
type nextAuthDB struct {
	db      *sql.DB
	from    string // --from
	dialect string
	names   [4]string
}

func (n *nextAuthDB) q(name string) string { return `"` + name + `"` }

func (n *nextAuthDB) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if n.dialect == "postgres" {
		i := 0
		query = replaceEach(query, "?", func() string { i++; return fmt.Sprintf("$%d", i) })
	}
	_, err := n.db.Exec(query, args...)
	require.NoError(t, err, query)
}

func replaceEach(s, old string, next func() string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i] + next())
		s = s[i+len(old):]
	}
}

// create makes the four tables; timeType is how the adapter stores times.
func (n *nextAuthDB) create(t *testing.T, idType, timeType string) {
	t.Helper()
	u, a, s, v := n.q(n.names[0]), n.q(n.names[1]), n.q(n.names[2]), n.q(n.names[3])
	n.exec(t, `CREATE TABLE `+u+` (id `+idType+` PRIMARY KEY, name TEXT, email TEXT UNIQUE, "emailVerified" `+timeType+`, image TEXT)`)
	n.exec(t, `CREATE TABLE `+a+` (id `+idType+` PRIMARY KEY, "userId" TEXT NOT NULL, type TEXT NOT NULL, provider TEXT NOT NULL,
		"providerAccountId" TEXT NOT NULL, refresh_token TEXT, access_token TEXT, expires_at BIGINT, token_type TEXT, scope TEXT,
		id_token TEXT, session_state TEXT)`)
	n.exec(t, `CREATE TABLE `+s+` (id `+idType+` PRIMARY KEY, "userId" TEXT NOT NULL, expires `+timeType+` NOT NULL, "sessionToken" TEXT NOT NULL UNIQUE)`)
	n.exec(t, `CREATE TABLE `+v+` (identifier TEXT NOT NULL, expires `+timeType+` NOT NULL, token TEXT NOT NULL, PRIMARY KEY (identifier, token))`)
}

func sqliteSource(t *testing.T, schema string) *nextAuthDB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "next-auth.db")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return &nextAuthDB{db: db, from: path, dialect: "sqlite", names: names(schema)}
}

func postgresSource(t *testing.T, schema string) *nextAuthDB {
	t.Helper()
	url := pgtest.NewDatabase(t, pg.URL(t))
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return &nextAuthDB{db: db, from: url, dialect: "postgres", names: names(schema)}
}

func names(schema string) [4]string {
	return map[string][4]string{
		importstore.SchemaPrisma:  {"User", "Account", "Session", "VerificationToken"},
		importstore.SchemaSQL:     {"users", "accounts", "sessions", "verification_token"},
		importstore.SchemaDrizzle: {"user", "account", "session", "verificationToken"},
	}[schema]
}

// target is a fresh latchkey database (SQLite).
func target(t *testing.T) *models.Store {
	t.Helper()
	st, err := models.Open(filepath.Join(t.TempDir(), "latchkey.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func run(t *testing.T, n *nextAuthDB, st *models.Store, o importer.Options) importer.Summary {
	t.Helper()
	src, err := importstore.Open(context.Background(), n.from, "")
	require.NoError(t, err)
	defer src.Close()
	o.Now = func() time.Time { return now }
	if o.BatchSize == 0 {
		o.BatchSize = 2 // several pages of every table
	}
	sum, err := importer.Run(context.Background(), src, importstore.NewTarget(st), o)
	require.NoError(t, err)
	return sum
}

// fill writes what a next-auth server with an adapter holds: users signed
// in by e-mail and OAuth, their accounts and sessions (one expired), a
// mailed link, and a user whose address differs from another's only by
// case (next-auth keeps e-mails as the provider gave them).
func fill(t *testing.T, n *nextAuthDB, at func(time.Time) any) {
	t.Helper()
	u, a, s, v := n.q(n.names[0]), n.q(n.names[1]), n.q(n.names[2]), n.q(n.names[3])
	later, earlier := now.Add(24*time.Hour), now.Add(-time.Hour)
	n.exec(t, `INSERT INTO `+u+` (id, name, email, "emailVerified", image) VALUES (?, ?, ?, ?, ?)`, "1", "Ann", "ann@example.com", at(now.Add(-48*time.Hour)), nil)
	n.exec(t, `INSERT INTO `+u+` (id, name, email, "emailVerified", image) VALUES (?, ?, ?, ?, ?)`, "2", "Bob", "bob@example.com", nil, "https://img.example/bob.png")
	n.exec(t, `INSERT INTO `+u+` (id, name, email, "emailVerified", image) VALUES (?, ?, ?, ?, ?)`, "3", "Ann again", "ANN@example.com", nil, nil)
	n.exec(t, `INSERT INTO `+u+` (id, name, email, "emailVerified", image) VALUES (?, ?, ?, ?, ?)`, "4", "Cy", nil, nil, nil)
	n.exec(t, `INSERT INTO `+a+` (id, "userId", type, provider, "providerAccountId", access_token) VALUES (?, ?, ?, ?, ?, ?)`, "a1", "2", "oauth", "github", "gh-2", "gho_secret")
	n.exec(t, `INSERT INTO `+a+` (id, "userId", type, provider, "providerAccountId") VALUES (?, ?, ?, ?, ?)`, "a2", "3", "oidc", "idp", "idp-3")
	n.exec(t, `INSERT INTO `+a+` (id, "userId", type, provider, "providerAccountId") VALUES (?, ?, ?, ?, ?)`, "a3", "4", "oidc", "idp", "idp-4")
	n.exec(t, `INSERT INTO `+s+` (id, "userId", expires, "sessionToken") VALUES (?, ?, ?, ?)`, "s1", "1", at(later), "token-ann")
	n.exec(t, `INSERT INTO `+s+` (id, "userId", expires, "sessionToken") VALUES (?, ?, ?, ?)`, "s2", "2", at(later), "token-bob")
	n.exec(t, `INSERT INTO `+s+` (id, "userId", expires, "sessionToken") VALUES (?, ?, ?, ?)`, "s3", "2", at(earlier), "token-bob-old")
	n.exec(t, `INSERT INTO `+s+` (id, "userId", expires, "sessionToken") VALUES (?, ?, ?, ?)`, "s4", "3", at(later), "token-ann-again")
	n.exec(t, `INSERT INTO `+v+` (identifier, expires, token) VALUES (?, ?, ?)`, "dee@example.com", at(later), hashA)
	n.exec(t, `INSERT INTO `+v+` (identifier, expires, token) VALUES (?, ?, ?)`, "eve@example.com", at(earlier), strings.Repeat("b", 64))
}

// check is what every naming and dialect must import from fill's rows.
func check(t *testing.T, st *models.Store, sum importer.Summary) {
	t.Helper()
	ctx := context.Background()
	require.Equal(t, importer.Count{Read: 4, Imported: 3, Skipped: 1}, sum.Users)
	require.Equal(t, importer.Count{Read: 3, Imported: 2, Skipped: 1}, sum.Accounts)
	require.Equal(t, importer.Count{Read: 4, Imported: 2, Skipped: 2}, sum.Sessions)
	require.Equal(t, importer.Count{Read: 2, Imported: 1, Skipped: 1}, sum.Tokens)
	require.Equal(t, 1, sum.TokensDropped, "github's access token is not kept, and said so")

	ann, err := st.UserByEmail(ctx, "ann@example.com")
	require.NoError(t, err)
	require.Equal(t, "1", ann.ID, "ids are kept")
	require.NotNil(t, ann.EmailVerified, "verification is kept")
	require.WithinDuration(t, now.Add(-48*time.Hour), *ann.EmailVerified, time.Second)
	bob, err := st.UserByEmail(ctx, "bob@example.com")
	require.NoError(t, err)
	require.Nil(t, bob.EmailVerified)
	require.Equal(t, "https://img.example/bob.png", *bob.Image)
	gh, err := st.UserByAccount(ctx, "github", "gh-2")
	require.NoError(t, err)
	require.Equal(t, "2", gh.ID)
	accounts, err := st.AccountsOf(ctx, "2")
	require.NoError(t, err)
	require.Len(t, accounts, 1)
	require.Nil(t, accounts[0].AccessToken, "no provider token came in")
	cy, err := st.UserByAccount(ctx, "idp", "idp-4")
	require.NoError(t, err)
	require.Equal(t, "4", cy.ID)

	// The case duplicate came in with nothing of it.
	_, err = st.UserByAccount(ctx, "idp", "idp-3")
	require.ErrorIs(t, err, models.ErrNotFound)
	var row models.SessionRow
	require.ErrorIs(t, st.ReadSession(ctx, session.HashToken("token-ann-again"), &row), models.ErrNotFound)
	require.ErrorIs(t, st.ReadSession(ctx, session.HashToken("token-bob-old"), &row), models.ErrNotFound, "expired: not imported")
	require.Contains(t, sum.Skipped, importer.Skip{Table: "users", Key: "3", Reason: "its e-mail is user 1's but for case (latchkey's e-mails are case-insensitive)", N: 1})
	require.Contains(t, sum.Skipped, importer.Skip{Table: "accounts", Key: "idp/idp-3", Reason: "its user 3 was skipped", N: 1})

	// A browser's cookie is the session: found under its token's hash, with its expiry.
	require.NoError(t, st.ReadSession(ctx, session.HashToken("token-ann"), &row))
	require.Equal(t, "1", row.UserID)
	require.WithinDuration(t, now.Add(24*time.Hour), row.Expires, time.Second)
	require.NoError(t, st.ReadSession(ctx, session.HashToken("token-bob"), &row))
	require.Equal(t, "2", row.UserID)

	// The mailed link: stored as next-auth hashed it.
	tok, err := st.VerificationTokenByHash(ctx, hashA)
	require.NoError(t, err)
	require.Equal(t, "dee@example.com", tok.Identifier)
	require.WithinDuration(t, now.Add(24*time.Hour), tok.Expires, time.Second)
}

// Every naming, on SQLite (times as ISO text, as Kysely and Drizzle write
// them; Prisma's SQLite writes milliseconds) and on PostgreSQL
// (timestamps; the pg adapter's integer ids): the same users, accounts,
// sessions and links come in, and a second run imports nothing new.
func TestImportEveryNamingAndDialect(t *testing.T) {
	iso := func(t time.Time) any { return t.Format("2006-01-02T15:04:05.000Z") }
	millis := func(t time.Time) any { return t.UnixMilli() }
	stamp := func(t time.Time) any { return t }
	for _, tc := range []struct {
		name, schema   string
		pg             bool
		idType, tmType string
		at             func(time.Time) any
	}{
		{"prisma on sqlite", importstore.SchemaPrisma, false, "TEXT", "DATETIME", millis},
		{"sql on sqlite", importstore.SchemaSQL, false, "TEXT", "TEXT", iso},
		{"drizzle on sqlite", importstore.SchemaDrizzle, false, "TEXT", "INTEGER", millis},
		{"sql on postgres", importstore.SchemaSQL, true, "TEXT", "TIMESTAMPTZ", stamp},
		{"prisma on postgres", importstore.SchemaPrisma, true, "TEXT", "TIMESTAMP(3)", stamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n *nextAuthDB
			if tc.pg {
				n = postgresSource(t, tc.schema)
			} else {
				n = sqliteSource(t, tc.schema)
			}
			n.create(t, tc.idType, tc.tmType)
			fill(t, n, tc.at)
			st := target(t)

			dry := run(t, n, st, importer.Options{DryRun: true})
			require.Equal(t, tc.schema, dry.Schema)
			require.Equal(t, 3, dry.Users.Imported, "a dry run judges as a real one")
			_, err := st.UserByEmail(context.Background(), "ann@example.com")
			require.ErrorIs(t, err, models.ErrNotFound, "and writes nothing")

			sum := run(t, n, st, importer.Options{Providers: []string{"github", "idp"}})
			check(t, st, sum)
			require.Empty(t, sum.UnknownProviders)

			again := run(t, n, st, importer.Options{})
			require.Equal(t, importer.Count{Read: 4, There: 3, Skipped: 1}, again.Users)
			require.Equal(t, importer.Count{Read: 3, There: 2, Skipped: 1}, again.Accounts)
			require.Equal(t, 0, again.Sessions.Imported)
			require.Equal(t, 2, again.Sessions.There)
		})
	}
}

// The pg adapter's own table: SERIAL ids (integers), read back as the
// strings latchkey's ids are.
func TestImportIntegerIDs(t *testing.T) {
	n := postgresSource(t, importstore.SchemaSQL)
	n.exec(t, `CREATE TABLE users (id SERIAL PRIMARY KEY, name VARCHAR(255), email VARCHAR(255), "emailVerified" TIMESTAMPTZ, image TEXT)`)
	n.exec(t, `CREATE TABLE accounts (id SERIAL PRIMARY KEY, "userId" INTEGER NOT NULL, type VARCHAR(255) NOT NULL, provider VARCHAR(255) NOT NULL,
		"providerAccountId" VARCHAR(255) NOT NULL, refresh_token TEXT, access_token TEXT, expires_at BIGINT, id_token TEXT, scope TEXT,
		session_state TEXT, token_type TEXT)`)
	n.exec(t, `CREATE TABLE sessions (id SERIAL PRIMARY KEY, "userId" INTEGER NOT NULL, expires TIMESTAMPTZ NOT NULL, "sessionToken" VARCHAR(255) NOT NULL)`)
	n.exec(t, `CREATE TABLE verification_token (identifier TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL, token TEXT NOT NULL, PRIMARY KEY (identifier, token))`)
	for i := range 5 {
		n.exec(t, `INSERT INTO users (name, email) VALUES (?, ?)`, fmt.Sprint("user ", i), fmt.Sprintf("u%d@example.com", i))
		n.exec(t, `INSERT INTO accounts ("userId", type, provider, "providerAccountId") VALUES (?, 'oidc', 'idp', ?)`, i+1, fmt.Sprint("sub-", i))
		n.exec(t, `INSERT INTO sessions ("userId", expires, "sessionToken") VALUES (?, ?, ?)`, i+1, now.Add(time.Hour), fmt.Sprint("tok-", i))
	}
	st := target(t)
	sum := run(t, n, st, importer.Options{})
	require.Equal(t, importer.Count{Read: 5, Imported: 5}, sum.Users)
	require.Equal(t, importer.Count{Read: 5, Imported: 5}, sum.Accounts)
	require.Equal(t, importer.Count{Read: 5, Imported: 5}, sum.Sessions)
	u, err := st.UserByAccount(context.Background(), "idp", "sub-3")
	require.NoError(t, err)
	require.Equal(t, "4", u.ID)
	require.Equal(t, map[string]int{"idp": 5}, sum.UnknownProviders, "no provider configured: noted")
}

// A latchkey that already has users: an identity linked to another
// latchkey user is never re-linked, and a next-auth user whose e-mail a
// latchkey user has is not merged into it.
func TestImportNeverLinksToAnotherUser(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	n.exec(t, `INSERT INTO users (id, email) VALUES ('n1', 'pat@example.com'), ('n2', 'quinn@example.com')`)
	n.exec(t, `INSERT INTO accounts (id, "userId", type, provider, "providerAccountId") VALUES ('x', 'n2', 'oidc', 'idp', 'taken')`)
	st := target(t)
	ctx := context.Background()
	pat, other := &models.User{Email: ptr("pat@example.com")}, &models.User{Email: ptr("other@example.com")}
	require.NoError(t, st.CreateUser(ctx, pat))
	require.NoError(t, st.CreateUser(ctx, other))
	require.NoError(t, st.LinkAccount(ctx, &models.Account{UserID: other.ID, Type: "oidc", Provider: "idp", ProviderAccountID: "taken"}))

	sum := run(t, n, st, importer.Options{})
	require.Equal(t, importer.Count{Read: 2, Imported: 1, Skipped: 1}, sum.Users)
	require.Contains(t, sum.Skipped, importer.Skip{Table: "users", Key: "n1", Reason: "its e-mail belongs to latchkey user " + pat.ID + " (accounts are never linked by e-mail)", N: 1})
	require.Contains(t, sum.Skipped, importer.Skip{Table: "accounts", Key: "idp/taken", Reason: "linked to latchkey user " + other.ID + " already (never re-linked)", N: 1})
	u, err := st.UserByAccount(ctx, "idp", "taken")
	require.NoError(t, err)
	require.Equal(t, other.ID, u.ID)
}

// A database that is not a next-auth one, or lacks a column the import
// reads, is refused, naming what it expected.
func TestImportRefusesUnknownSchemas(t *testing.T) {
	empty := sqliteSource(t, importstore.SchemaSQL)
	empty.exec(t, `CREATE TABLE things (id TEXT)`)
	_, err := importstore.Open(context.Background(), empty.from, "")
	require.ErrorIs(t, err, importstore.ErrUnknownSchema)
	require.Contains(t, err.Error(), `sql ("users", "accounts", "sessions", "verification_token"): no table "users"`)

	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	n.exec(t, `ALTER TABLE sessions RENAME COLUMN "sessionToken" TO session_token`)
	_, err = importstore.Open(context.Background(), n.from, "")
	require.ErrorIs(t, err, importstore.ErrUnknownSchema)
	require.Contains(t, err.Error(), `table "sessions" has no column "sessionToken"`)

	_, err = importstore.Open(context.Background(), n.from, importstore.SchemaPrisma)
	require.ErrorIs(t, err, importstore.ErrUnknownSchema, "--schema names the one naming to look for")
}

func ptr(s string) *string { return &s }

// What latchkey ended after an import stays ended when the import runs
// again (migration step 5: import again after the switch), however long
// next-auth's database keeps the rows: a signed-out session, a used link,
// an unlinked account, a deleted user (and everything of it), and a
// session signed in on the old server meanwhile by a user whose sessions
// latchkey revoked (next-auth keeps no sign-in time to tell whether it came
// before the revocation), while a revocation from before the migration
// drops nothing.
func TestImportDoesNotBringBackWhatLatchkeyEnded(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		n := sqliteSource(t, importstore.SchemaSQL)
		n.create(t, "TEXT", "TEXT")
		at := func(t time.Time) any { return t.Format(time.RFC3339Nano) }
		fill(t, n, at)
		testNotBroughtBack(t, n, target(t), at)
	})
	t.Run("postgres", func(t *testing.T) {
		n := postgresSource(t, importstore.SchemaSQL)
		n.create(t, "TEXT", "TIMESTAMPTZ")
		at := func(t time.Time) any { return t }
		fill(t, n, at)
		testNotBroughtBack(t, n, pgTarget(t), at)
	})
}

func testNotBroughtBack(t *testing.T, n *nextAuthDB, st *models.Store, at func(time.Time) any) {
	storetest.RequireMigrated(t, st, &importstore.LedgerEntry{})
	ctx := context.Background()
	_, err := st.RevokeSessions(ctx, models.AllUsers, time.Now().Add(-time.Hour))
	require.NoError(t, err, "a revocation from before the migration")
	check(t, st, run(t, n, st, importer.Options{}))

	// Between the runs, ann and bob sign in once more on the old server,
	// and ann signs out everywhere in latchkey.
	s := n.q(n.names[2])
	for _, tok := range []string{"token-ann-phone", "token-bob-laptop"} {
		user := map[string]string{"token-ann-phone": "1", "token-bob-laptop": "2"}[tok]
		n.exec(t, `INSERT INTO `+s+` (id, "userId", expires, "sessionToken") VALUES (?, ?, ?, ?)`, tok, user, at(now.Add(24*time.Hour)), tok)
	}
	require.NoError(t, st.DeleteSession(ctx, session.HashToken("token-ann")), "ann signs out")
	_, err = st.RevokeSessions(ctx, "1", time.Now())
	require.NoError(t, err, "ann signs out everywhere")
	require.NoError(t, st.DeleteVerificationToken(ctx, "dee@example.com", hashA), "dee's link is used")
	unlinked, err := st.UnlinkAccount(ctx, "2", "github")
	require.NoError(t, err)
	require.EqualValues(t, 1, unlinked)
	_, err = st.DeleteUser(ctx, "4", now)
	require.NoError(t, err, "cy is deleted")

	again := run(t, n, st, importer.Options{})
	require.Equal(t, importer.Count{Read: 4, There: 2, Skipped: 2}, again.Users)
	require.Equal(t, importer.Count{Read: 3, Skipped: 3}, again.Accounts)
	require.Equal(t, importer.Count{Read: 6, Imported: 1, There: 1, Skipped: 4}, again.Sessions)
	require.Equal(t, importer.Count{Read: 2, Skipped: 2}, again.Tokens)
	require.Contains(t, again.Skipped, importer.Skip{Table: "users", Key: "4", Reason: "deleted in latchkey since an earlier import", N: 1})
	require.Contains(t, again.Skipped, importer.Skip{Table: "accounts", Key: "github/gh-2", Reason: "unlinked in latchkey since an earlier import", N: 1})
	require.Contains(t, again.Skipped, importer.Skip{Table: "sessions", Reason: "ended in latchkey since an earlier import (signed out or revoked)", N: 1})
	require.Contains(t, again.Skipped, importer.Skip{Table: "verification tokens", Reason: "used or removed in latchkey since an earlier import", N: 1})
	require.Contains(t, again.Skipped, importer.Skip{Table: "sessions", Key: "of user 1", Reason: "its user's sessions were revoked in latchkey since the import began", N: 1})

	var row models.SessionRow
	require.ErrorIs(t, st.ReadSession(ctx, session.HashToken("token-ann"), &row), models.ErrNotFound, "the signed-out session stays ended")
	require.ErrorIs(t, st.ReadSession(ctx, session.HashToken("token-ann-phone"), &row), models.ErrNotFound,
		"a session ann may have signed in before signing out everywhere does not come in")
	require.NoError(t, st.ReadSession(ctx, session.HashToken("token-bob-laptop"), &row), "bob's new sign-in comes in")

	// An administrator's `latchkey sessions revoke --all`: no session read
	// afterwards comes in, whoever's it is.
	n.exec(t, `INSERT INTO `+s+` (id, "userId", expires, "sessionToken") VALUES (?, ?, ?, ?)`, "s-tab", "2", at(now.Add(24*time.Hour)), "token-bob-tablet")
	_, err = st.RevokeSessions(ctx, models.AllUsers, time.Now())
	require.NoError(t, err)
	third := run(t, n, st, importer.Options{})
	require.Zero(t, third.Sessions.Imported)
	require.Contains(t, third.Skipped, importer.Skip{Table: "sessions", Key: "of user 2", Reason: "its user's sessions were revoked in latchkey since the import began", N: 1})
	require.ErrorIs(t, st.ReadSession(ctx, session.HashToken("token-bob-tablet"), &row), models.ErrNotFound)
	_, err = st.VerificationTokenByHash(ctx, hashA)
	require.ErrorIs(t, err, models.ErrNotFound, "the used link stays used")
	_, err = st.UserByAccount(ctx, "github", "gh-2")
	require.ErrorIs(t, err, models.ErrNotFound, "the unlinked account stays unlinked")
	_, err = st.UserByAccount(ctx, "idp", "idp-4")
	require.ErrorIs(t, err, models.ErrNotFound, "the deleted user stays deleted")
}

// For a provider with store_tokens the accounts' provider tokens come in,
// sealed under the service secret as GET /token reads them; nothing of
// them is in the database file in the clear.
func TestImportKeepsTokensSealed(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "TEXT", "TEXT")
	fill(t, n, func(t time.Time) any { return t.Format("2006-01-02T15:04:05.000Z") })
	path := filepath.Join(t.TempDir(), "latchkey.db")
	st, err := models.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	secrets := []string{"import-secret-0123456789abcdef0123456789"}
	sealer, err := providertokens.NewSealer(secrets)
	require.NoError(t, err)

	sum := run(t, n, st, importer.Options{Providers: []string{"github", "idp"}, KeepTokens: []string{"github"}, SealTokens: sealer.SealAccount})
	require.Equal(t, 1, sum.TokensKept)
	require.Zero(t, sum.TokensDropped)
	accounts, err := st.AccountsOf(context.Background(), "2")
	require.NoError(t, err)
	require.Len(t, accounts, 1)
	require.NotNil(t, accounts[0].AccessToken)
	require.True(t, strings.HasPrefix(*accounts[0].AccessToken, "lk1:"), *accounts[0].AccessToken)

	svc, err := providertokens.New(tokenstore.New(st), nil, providertokens.Config{Providers: []string{"github"}, Secrets: secrets, Wait: time.Second})
	require.NoError(t, err)
	tok, err := svc.Token(context.Background(), "2", "github")
	require.NoError(t, err)
	require.Equal(t, "gho_secret", tok.AccessToken)

	require.NoError(t, st.DB().Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.False(t, strings.Contains(string(b), "gho_secret"), "a provider token in the clear in the file")
}

// A SQLite next-auth database whose ids are BLOBs (an adapter that wrote
// them as bytes): read page by page to the end, as TEXT ids are. SQLite
// sorts every BLOB after every TEXT, so the import once read the first
// page forever.
func TestImportBlobKeys(t *testing.T) {
	n := sqliteSource(t, importstore.SchemaSQL)
	n.create(t, "BLOB", "TEXT")
	for _, id := range []string{"u1", "u2", "u3"} {
		n.exec(t, `INSERT INTO users (id, email) VALUES (?, ?)`, []byte(id), id+"@example.com")
	}
	src, err := importstore.Open(context.Background(), n.from, "")
	require.NoError(t, err)
	defer src.Close()
	st := target(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sum, err := importer.Run(ctx, src, importstore.NewTarget(st), importer.Options{BatchSize: 2, Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.Equal(t, importer.Count{Read: 3, Imported: 3}, sum.Users)
	u, err := st.UserByEmail(context.Background(), "u3@example.com")
	require.NoError(t, err)
	require.Equal(t, "u3", u.ID)
}
