package scalefill

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/accountstore"
	"github.com/latchkey-auth/latchkey/models/adminstore"
	"github.com/latchkey-auth/latchkey/models/groupstore"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/storetest"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
	"github.com/latchkey-auth/latchkey/models/webhookstore"
)

// postgresURL is the admin URL of the PostgreSQL server the tests share.
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }

// testSizes fill enough rows that a sequential scan is the planner's
// choice only when no index serves the query, and fast enough for the
// normal suite (a few seconds per dialect).
var testSizes = Sizes{Users: 10_000, Sessions: 50_000, Tokens: 20_000, RateLimits: 5_000, Revocations: 100, SignIns: 20_000, Webhooks: 10_000}

// largeRows is when a table counts as large: the fill's tables (users,
// accounts, sessions, verification_tokens, passwords, user_groups,
// rate_limits, sign_ins, webhook_deliveries) are; a table it leaves (nearly)
// empty is read whole by the planner's choice, whatever its indexes.
const largeRows = 500

// wholeByDesign are the statements that read a large table whole by
// design, with why: none is on a request path.
var wholeByDesign = map[string]string{
	// PurgeExpired's hourly pass over the rate-limit buckets and password
	// counters: no index on the column every take changes keeps those
	// updates HOT on PostgreSQL (schema step 3).
	"rate_limits":        "DELETE FROM rate_limits",
	"password_throttles": "DELETE FROM password_throttles",
}

// aliasRE finds a statement's tables and their aliases.
var aliasRE = regexp.MustCompile("(?i)(?:FROM|JOIN)\\s+[`\"]?(\\w+)[`\"]?(?:\\s+(?:AS\\s+)?(\\w+))?")

// keywords may follow a table name where an alias would.
var keywords = map[string]bool{"WHERE": true, "JOIN": true, "ON": true, "ORDER": true, "GROUP": true, "LIMIT": true,
	"LEFT": true, "INNER": true, "SET": true, "USING": true, "RETURNING": true, "AS": true, "FOR": true}

// statement is one SQL statement a store method ran, with its arguments.
type statement struct {
	sql  string
	vars []any
}

// capture records every statement GORM runs on s from now on.
func capture(t *testing.T, s *models.Store) func() []statement {
	var mu sync.Mutex
	var got []statement
	rec := func(db *gorm.DB) {
		if db.Statement == nil || db.Statement.SQL.Len() == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, statement{db.Statement.SQL.String(), append([]any(nil), db.Statement.Vars...)})
	}
	cb := s.DB().Callback()
	name := "scalefill:capture"
	require.NoError(t, cb.Query().Register(name, rec))
	require.NoError(t, cb.Row().Register(name, rec))
	require.NoError(t, cb.Raw().Register(name, rec))
	require.NoError(t, cb.Create().Register(name, rec))
	require.NoError(t, cb.Update().Register(name, rec))
	require.NoError(t, cb.Delete().Register(name, rec))
	return func() []statement { mu.Lock(); defer mu.Unlock(); return append([]statement(nil), got...) }
}

// TestRequestPathsUseIndexes runs the store methods of the request paths
// (GET /session and forward-auth, the e-mail, password and OAuth sign-ins,
// the revocation and sign-out polls, the webhook claim, the purge and the
// admin listings' pages) against a filled database, captures every
// statement they send, and asks the database how it runs each: none may
// read a large table whole (SQLite "SCAN t" without an index search,
// PostgreSQL "Seq Scan on t" with the planner's default settings after
// ANALYZE).
func TestRequestPathsUseIndexes(t *testing.T) {
	storetest.EachDialect(t, postgresURL, func(t *testing.T, c models.Config) {
		ctx := context.Background()
		s := storetest.Connect(t, c)
		now := time.Now()
		start := time.Now()
		require.NoError(t, Fill(ctx, s, testSizes, now, nil))
		t.Logf("filled in %v", time.Since(start).Round(time.Millisecond))

		got := capture(t, s)
		exercise(t, s, now)
		stmts := got()
		require.Greater(t, len(stmts), 30)
		stmts = append(stmts, statement{s.SessionLookupSQL(""), []any{TokenHash(SessionToken(0))}},
			statement{groupstore.New(s).GroupsSQL(), []any{UserID(2)}},
			statement{groupstore.New(s).SessionSQL(), []any{TokenHash(SessionToken(0))}})
		var large []string
		for _, tbl := range []string{"users", "accounts", "sessions", "verification_tokens", "passwords", "user_groups",
			"rate_limits", "password_throttles", "sign_ins", "webhook_deliveries", "session_revocations", "authenticators"} {
			if storetest.Count(t, s, tbl) >= largeRows {
				large = append(large, tbl)
			}
		}
		require.Len(t, large, 9, "the filled tables")
		checked := 0
		// The plans are asked for after every statement ran, of one database:
		// a statement sent again with the same arguments (the purge's batches,
		// its checkpoints) has the plan it had the first time.
		explained := map[string]bool{}
		for _, st := range stmts {
			head := strings.ToUpper(strings.Fields(strings.TrimSpace(st.sql))[0])
			if head == "SAVEPOINT" || head == "RELEASE" || head == "ROLLBACK" {
				continue
			}
			key := fmt.Sprintf("%s %#v", st.sql, st.vars)
			if explained[key] {
				continue
			}
			explained[key] = true
			plan := explain(t, s, st)
			t.Logf("%s\n\t=> %s", st.sql, plan)
			checked++
			for _, tbl := range large {
				// SQLite names a table by its alias when it has one.
				names := tbl
				for _, m := range aliasRE.FindAllStringSubmatch(st.sql, -1) {
					if m[1] == tbl && m[2] != "" && !keywords[strings.ToUpper(m[2])] {
						names += "|" + m[2]
					}
				}
				bad := regexp.MustCompile(`(^|; )SCAN (` + names + `)($|;| USING (COVERING )?INDEX)`)
				if c.Dialect == models.DialectPostgres {
					bad = regexp.MustCompile(`Seq Scan on ` + tbl + `\b`)
				}
				// A walk of an index in the statement's order that stops at its
				// LIMIT (a listing's first page) reads a page, not the table.
				if regexp.MustCompile(`SCAN `+tbl+`( AS \w+)? USING (COVERING )?INDEX`).MatchString(plan) &&
					regexp.MustCompile(`ORDER BY .* LIMIT \d+$`).MatchString(st.sql) && !strings.Contains(plan, "TEMP B-TREE") {
					continue
				}
				if why, ok := wholeByDesign[tbl]; ok && strings.HasPrefix(strings.NewReplacer("`", "", `"`, "").Replace(st.sql), why) {
					continue
				}
				require.False(t, bad.MatchString(plan), "%s reads %s whole:\n%s\nplan: %s", head, tbl, st.sql, plan)
			}
		}
		t.Logf("%d statements explained", checked)
	})
}

// explain is the database's plan of st, its lines joined by "; ".
func explain(t *testing.T, s *models.Store, st statement) string {
	t.Helper()
	sqlDB, err := s.DB().DB()
	require.NoError(t, err)
	prefix := "EXPLAIN QUERY PLAN "
	col := 3 // id, parent, notused, detail
	if s.Dialect() == models.DialectPostgres {
		prefix, col = "EXPLAIN ", 0
	}
	rows, err := sqlDB.Query(prefix+st.sql, st.vars...)
	require.NoError(t, err, st.sql)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		lines = append(lines, strings.TrimSpace(fmt.Sprint(vals[col])))
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "; ")
}

// exercise calls the store methods the request paths call, on filled
// rows and on new ones, as the handlers do.
func exercise(t *testing.T, s *models.Store, now time.Time) {
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil && err != models.ErrNotFound {
			require.NoError(t, err)
		}
	}
	live := TokenHash(SessionToken(2))
	// GET /session (database strategy) and forward-auth: the lookup is the
	// prepared statement added by the caller; the sliding expiry, groups.
	must(s.ExtendSession(ctx, live, now.Add(30*24*time.Hour), now))
	_, err := s.SessionAndUser(ctx, live)
	must(err)
	_, err = groupstore.New(s).Groups(ctx, UserID(2))
	must(err)
	// E-mail sign-in: the rate limits, the link, its redemption.
	_, err = s.TakeRateLimits(ctx, now, []models.RateBucket{{Key: "email:" + TokenHash("x"), Interval: time.Minute, Burst: 3}})
	must(err)
	must(s.CreateVerificationToken(ctx, Email(5), TokenHash("new-link"), now.Add(time.Hour)))
	_, err = s.VerificationTokenByHash(ctx, TokenHash("new-link"))
	must(err)
	_, _, err = s.RedeemVerificationToken(ctx, Email(5), TokenHash("new-link"), now)
	must(err)
	_, _, err = s.RedeemVerificationToken(ctx, "new@scale.example", TokenHash("scale-link-0"), now)
	must(err)
	must(s.CreateSession(ctx, models.NewSession{UserID: UserID(5), TokenHash: TokenHash("new-session"), SignedIn: now, Expires: now.Add(time.Hour)}))
	// Password sign-in.
	_, _, err = s.UserAndPasswordByEmail(ctx, Email(7))
	must(err)
	_, err = throttlestore.New(s).PasswordThrottles(ctx, now, "pw:"+Email(7), "pw-ip:192.0.2.1")
	must(err)
	_, err = throttlestore.New(s).RecordPasswordFailure(ctx, now, "pw:"+Email(7), time.Hour)
	must(err)
	must(throttlestore.New(s).ForgetPasswordFailure(ctx, "pw:"+Email(7)))
	_, err = s.PasswordChangedAt(ctx, UserID(7))
	must(err)
	// OAuth callback: the account's user, or the address's, or a new one.
	_, err = s.UserByAccount(ctx, "github", "9")
	must(err)
	_, err = s.UserByEmail(ctx, Email(9))
	must(err)
	_, err = s.UserByID(ctx, UserID(9))
	must(err)
	must(s.CreateUserWithAccount(ctx, &models.User{Email: ptr("oauth-new@scale.example")},
		&models.Account{Type: "oauth", Provider: "github", ProviderAccountID: "new-9"}))
	_, err = s.AccountsOf(ctx, UserID(9))
	must(err)
	// Sign-out, revocation and sign-in polls, jwt sign-ins.
	must(s.DeleteSession(ctx, TokenHash(SessionToken(4))))
	_, err = s.RevocationsDigest(ctx)
	must(err)
	_, err = s.Revocations(ctx)
	must(err)
	as := accountstore.New(s)
	must(as.CreateSignIn(ctx, &accountstore.SignIn{UserID: UserID(11), CreatedAt: now, Expires: now.Add(time.Hour)}))
	must(as.SeenSignIn(ctx, "scale-signin-11", now, now.Add(time.Hour)))
	_, err = as.EndedSignInsDigest(ctx, now)
	must(err)
	_, err = as.EndedSignIns(ctx, now)
	must(err)
	_, err = as.SignInsOfUser(ctx, UserID(11), now)
	must(err)
	_, err = as.SessionsOfUser(ctx, UserID(11), now)
	must(err)
	// The account page's e-mail change (start, open the link), and what
	// a reset, a password change or sign-out everywhere ends with it.
	must(as.CreateEmailChange(ctx, UserID(15), "changed-15@scale.example", TokenHash("change-15"), now.Add(time.Hour)))
	_, _, _, err = as.ApplyEmailChange(ctx, TokenHash("change-15"), now)
	must(err)
	_, err = as.DeleteEmailChanges(ctx, UserID(17))
	must(err)
	// Deleting an account (the account page's, and the CLI's).
	_, err = s.DeleteUser(ctx, UserID(19), now)
	must(err)
	// The webhook worker's claim.
	_, err = webhookstore.New(s).Claim(ctx, "w1", now, time.Minute, 10, []string{"app"})
	must(err)
	// The purge (every instance, hourly) and the admin listings' pages. Its
	// cutoff leaves most expired rows: it still deletes some 2 400 sessions
	// and 700 links in many batches (every statement it sends, the last
	// short batch too), but not the 23 000 sessions a cutoff of an hour or
	// two would, each SQLite batch followed by a pause of at least 50 ms
	// in real time (batchpurge): that alone took 24 s under -race.
	_, err = s.PurgeExpired(ctx, now.Add(-16*time.Hour))
	must(err)
	ad := adminstore.New(s)
	users, next, err := ad.UserOverviews(ctx, now, adminstore.Page{Limit: 100})
	must(err)
	require.Len(t, users, 100)
	_, _, err = ad.UserOverviews(ctx, now, adminstore.Page{Limit: 100, After: next})
	must(err)
	_, next, err = ad.SessionListings(ctx, "", now, adminstore.Page{Limit: 100})
	must(err)
	_, _, err = ad.SessionListings(ctx, "", now, adminstore.Page{Limit: 100, After: next})
	must(err)
	_, _, err = ad.SessionListings(ctx, UserID(13), now, adminstore.Page{Limit: 100})
	must(err)
}

func ptr[T any](v T) *T { return &v }
