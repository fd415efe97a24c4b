package session_test

// One conformance suite, run against both strategies: the database strategy
// on a real store of each dialect (SQLite and PostgreSQL), and the jwt
// strategy (v4 and v5 formats).

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

const (
	cookieName = "next-auth.session-token"
	secret     = "session-conformance-secret-0123456789"
	maxAge     = 30 * 24 * time.Hour
	updateAge  = 24 * time.Hour
)

// clock is the injected time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness is one strategy under test plus what the suite needs around it.
type harness struct {
	strategy session.Strategy
	clock    *clock
	// newUser returns a user that may hold a session (a row, for the database).
	newUser func(t *testing.T) session.User
	// stored reports how many sessions storage holds (-1: stateless).
	stored func(t *testing.T) int
	// fixedClaims: the strategy was told no hook changes the claims
	// (JWT.WithFixedClaims), so the suite changes none.
	fixedClaims bool
}

// constructor builds a fresh harness with an absolute max age (0: none);
// the suite calls it once per subtest.
type constructor func(t *testing.T, absolute time.Duration) harness

func str(s string) *string { return &s }

// browser is a cookie jar that applies Set-Cookie in order, like a browser.
type browser map[string]string

func (b browser) apply(h http.Header) {
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			continue
		}
		if c.MaxAge < 0 {
			delete(b, c.Name)
		} else {
			b[c.Name] = c.Value
		}
	}
}

func (b browser) request() *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/auth/session", nil)
	var parts []string
	for k, v := range b {
		parts = append(parts, k+"="+v)
	}
	if len(parts) > 0 {
		r.Header.Set("Cookie", strings.Join(parts, "; "))
	}
	return r
}

func (b browser) sessionCookies() map[string]string {
	out := map[string]string{}
	for k, v := range b {
		if k == cookieName || strings.HasPrefix(k, cookieName+".") {
			out[k] = v
		}
	}
	return out
}

func (b browser) clone() browser {
	c := browser{}
	for k, v := range b {
		c[k] = v
	}
	return c
}

func create(t *testing.T, h harness, b browser, u session.User, claims map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	if claims == nil {
		claims = session.DefaultClaims(u)
	}
	require.NoError(t, h.strategy.Create(context.Background(), rec, b.request(), u, claims))
	b.apply(rec.Header())
	return rec
}

func read(t *testing.T, h harness, b browser) (*session.Session, bool) {
	t.Helper()
	s, sent, err := h.strategy.Read(context.Background(), b.request())
	require.NoError(t, err)
	return s, sent
}

func refresh(t *testing.T, h harness, b browser, s *session.Session) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	require.NoError(t, h.strategy.Refresh(context.Background(), rec, b.request(), s))
	b.apply(rec.Header())
	return rec
}

// runConformance is the suite every Strategy passes.
func runConformance(t *testing.T, build constructor) {
	newHarness := func(t *testing.T) harness { return build(t, 0) }
	t.Run("no cookie", func(t *testing.T) {
		h := newHarness(t)
		s, sent := read(t, h, browser{"unrelated": "x"})
		require.Nil(t, s)
		require.False(t, sent)
	})

	t.Run("create read refresh destroy", func(t *testing.T) {
		h := newHarness(t)
		u := h.newUser(t)
		b := browser{}
		start := h.clock.Now()
		rec := create(t, h, b, u, nil)
		for _, line := range rec.Header().Values("Set-Cookie") {
			c, err := http.ParseSetCookie(line)
			require.NoError(t, err)
			require.True(t, c.HttpOnly)
			require.Equal(t, "/", c.Path)
			require.Equal(t, http.SameSiteLaxMode, c.SameSite)
			require.True(t, start.Add(maxAge).Equal(c.Expires), "cookie expires at now+max_age: %v", c.Expires)
		}
		require.NotEmpty(t, b.sessionCookies())
		if n := h.stored(t); n >= 0 {
			require.Equal(t, 1, n)
		}

		h.clock.Add(time.Minute)
		s, sent := read(t, h, b)
		require.True(t, sent)
		require.NotNil(t, s)
		require.Equal(t, u.ID, s.User.ID)
		require.Equal(t, u.Name, s.User.Name)
		require.Equal(t, u.Email, s.User.Email)
		require.Equal(t, u.Image, s.User.Image)
		require.False(t, s.Expires.Before(start.Add(maxAge)), "expires %v", s.Expires)
		require.False(t, s.Expires.After(h.clock.Now().Add(maxAge)))

		// Within update_age the database strategy re-sets its cookie and the
		// jwt strategy leaves the token alone; once it has passed, both
		// re-issue the cookie to now+max_age.
		refresh(t, h, b, s)
		h.clock.Add(updateAge)
		s, _ = read(t, h, b)
		require.NotNil(t, s)
		rec = refresh(t, h, b, s)
		c, ok := findCookie(rec.Header(), cookieName)
		require.True(t, ok, "refresh re-issues the cookie once update_age has passed")
		require.True(t, h.clock.Now().Add(maxAge).Equal(c.Expires), "re-issued cookie expires at now+max_age")
		again, _ := read(t, h, b)
		require.NotNil(t, again)
		require.Equal(t, u.ID, again.User.ID)

		stolen := b.clone()
		rec = httptest.NewRecorder()
		require.NoError(t, h.strategy.Destroy(context.Background(), rec, b.request()))
		b.apply(rec.Header())
		require.Empty(t, b.sessionCookies(), "every session cookie is cleared")
		s, sent = read(t, h, b)
		require.Nil(t, s)
		require.False(t, sent)
		if n := h.stored(t); n >= 0 {
			require.Equal(t, 0, n, "the stored session is deleted")
			s, sent = read(t, h, stolen)
			require.Nil(t, s, "a copied cookie is dead after sign-out")
			require.True(t, sent)
		}
		// Destroying again, or without any session, is harmless.
		rec = httptest.NewRecorder()
		require.NoError(t, h.strategy.Destroy(context.Background(), rec, b.request()))
	})

	t.Run("tampered cookie", func(t *testing.T) {
		h := newHarness(t)
		b := browser{}
		create(t, h, b, h.newUser(t), nil)
		valid := b[cookieName]
		require.NotEmpty(t, valid)
		mid := len(valid) / 2
		flip := byte('A')
		if valid[mid] == 'A' {
			flip = 'B'
		}
		for name, v := range map[string]string{
			"flipped":   valid[:mid] + string(flip) + valid[mid+1:],
			"truncated": valid[:len(valid)-1],
			"appended":  valid + "A",
			"empty":     "",
			"garbage":   "not-a-session",
			"huge":      strings.Repeat("x", 8000),
			"other":     models.NewID(),
		} {
			s, sent := read(t, h, browser{cookieName: v})
			require.Nil(t, s, name)
			require.True(t, sent, name)
		}
		s, _ := read(t, h, b)
		require.NotNil(t, s, "the genuine cookie still works")
	})

	t.Run("expiry", func(t *testing.T) {
		h := newHarness(t)
		b := browser{}
		create(t, h, b, h.newUser(t), nil)
		h.clock.Add(maxAge - time.Minute)
		s, _ := read(t, h, b)
		require.NotNil(t, s, "valid until max_age")
		h.clock.Add(2 * time.Minute)
		s, sent := read(t, h, b)
		require.Nil(t, s, "expired after max_age")
		require.True(t, sent, "so the caller clears the cookie")
		if n := h.stored(t); n >= 0 {
			require.Equal(t, 0, n, "an expired row is deleted when read")
		}
	})

	t.Run("rolling", func(t *testing.T) {
		h := newHarness(t)
		b := browser{}
		create(t, h, b, h.newUser(t), nil)
		for range 5 { // a visit every 20 days keeps the session alive past 30 days
			h.clock.Add(20 * 24 * time.Hour)
			s, _ := read(t, h, b)
			require.NotNil(t, s)
			refresh(t, h, b, s)
		}
	})

	t.Run("clear keeps storage", func(t *testing.T) {
		h := newHarness(t)
		b := browser{}
		create(t, h, b, h.newUser(t), nil)
		before := h.stored(t)
		rec := httptest.NewRecorder()
		h.strategy.Clear(rec, b.request())
		b.apply(rec.Header())
		require.Empty(t, b.sessionCookies())
		require.Equal(t, before, h.stored(t))
	})

	t.Run("large claims", func(t *testing.T) {
		h := newHarness(t)
		u := h.newUser(t)
		big := session.DefaultClaims(u)
		big["blob"] = randomString(9000)
		b := browser{}
		rec := create(t, h, b, u, big)
		for _, line := range rec.Header().Values("Set-Cookie") {
			require.Less(t, len(line), 4096, "every cookie fits the browser limit")
		}
		s, _ := read(t, h, b)
		require.NotNil(t, s)
		require.Equal(t, u.ID, s.User.ID)
		if s.Claims != nil {
			require.Equal(t, big["blob"], s.Claims["blob"])
		}
		if h.fixedClaims {
			return
		}
		// Shrinking the session clears the chunks no longer needed.
		s.Claims = session.DefaultClaims(u)
		refresh(t, h, b, s)
		require.Len(t, b.sessionCookies(), 1)
		s, _ = read(t, h, b)
		require.NotNil(t, s)
		require.Equal(t, u.ID, s.User.ID)
	})

	t.Run("absolute lifetime ends an active session", func(t *testing.T) {
		const absolute = 45 * 24 * time.Hour
		h := build(t, absolute)
		b := browser{}
		start := h.clock.Now()
		end := start.Add(absolute)
		create(t, h, b, h.newUser(t), nil)
		// A visit every 5 days would keep a sliding-only session alive forever.
		for h.clock.Now().Add(5 * 24 * time.Hour).Before(end) {
			h.clock.Add(5 * 24 * time.Hour)
			s, _ := read(t, h, b)
			require.NotNil(t, s, "alive at %v", h.clock.Now().Sub(start))
			require.False(t, s.Expires.After(end), "reported expires %v is past sign-in + absolute_max_age", s.Expires)
			rec := refresh(t, h, b, s)
			c, ok := findCookie(rec.Header(), cookieName)
			if !ok {
				// The jwt strategy leaves a token alone when re-issuing it
				// would move nothing: it already expires at the absolute end.
				require.True(t, end.Equal(s.Expires), "not re-issued while it could slide: expires %v", s.Expires)
				continue
			}
			require.False(t, c.Expires.After(end), "cookie Expires %v is past sign-in + absolute_max_age", c.Expires)
			if want := h.clock.Now().Add(maxAge); want.Before(end) {
				require.True(t, want.Equal(c.Expires), "still sliding: now+max_age")
			} else {
				require.True(t, end.Equal(c.Expires), "capped at the absolute end")
			}
		}
		h.clock.Add(end.Sub(h.clock.Now()) - time.Second)
		s, _ := read(t, h, b)
		require.NotNil(t, s, "alive one second before the absolute end")
		require.True(t, end.Equal(s.Expires), "reported expires is the absolute end: %v", s.Expires)
		refresh(t, h, b, s)
		h.clock.Add(time.Second)
		s, sent := read(t, h, b)
		require.Nil(t, s, "ended at sign-in + absolute_max_age despite the activity")
		require.True(t, sent, "so the caller clears the cookie")
		if n := h.stored(t); n >= 0 {
			require.Equal(t, 0, n, "the ended row is deleted when read")
		}
	})

	t.Run("absolute lifetime caps a new session", func(t *testing.T) {
		// absolute == max_age (the default): the first expiry is both.
		h := build(t, maxAge)
		b := browser{}
		start := h.clock.Now()
		rec := create(t, h, b, h.newUser(t), nil)
		c, ok := findCookie(rec.Header(), cookieName)
		require.True(t, ok)
		require.True(t, start.Add(maxAge).Equal(c.Expires))
		for range 2 {
			h.clock.Add(10 * 24 * time.Hour)
			s, _ := read(t, h, b)
			require.NotNil(t, s)
			require.True(t, start.Add(maxAge).Equal(s.Expires), "expires stays at sign-in + absolute_max_age: %v", s.Expires)
			refresh(t, h, b, s)
		}
		h.clock.Add(10 * 24 * time.Hour)
		s, _ := read(t, h, b)
		require.Nil(t, s, "ended at sign-in + absolute_max_age")
	})

	t.Run("sign-in time survives refresh", func(t *testing.T) {
		h := build(t, 90*24*time.Hour)
		b := browser{}
		start := h.clock.Now()
		create(t, h, b, h.newUser(t), nil)
		encoded := start
		for range 4 {
			h.clock.Add(2 * updateAge)
			s, _ := read(t, h, b)
			require.NotNil(t, s)
			require.True(t, start.Equal(s.SignedIn), "sign-in time %v, want %v", s.SignedIn, start)
			if s.Claims != nil {
				require.EqualValues(t, start.Unix(), s.Claims["auth_time"], "the token carries the sign-in time")
				require.EqualValues(t, encoded.Unix(), s.Claims["iat"], "iat stays next-auth's: the time of the last encode")
				// A JWT hook cannot move the sign-in time.
				delete(s.Claims, "auth_time")
			}
			refresh(t, h, b, s)
			encoded = h.clock.Now()
		}
		s, _ := read(t, h, b)
		require.True(t, start.Equal(s.SignedIn))
	})

	t.Run("concurrent reads", func(t *testing.T) {
		h := newHarness(t)
		b := browser{}
		create(t, h, b, h.newUser(t), nil)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				s, _, err := h.strategy.Read(context.Background(), b.request())
				if err != nil || s == nil {
					t.Errorf("read: %v %v", s, err)
				}
			})
		}
		wg.Wait()
	})
}

func findCookie(h http.Header, name string) (*http.Cookie, bool) {
	for _, line := range h.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == name {
			return c, true
		}
	}
	return nil, false
}

func randomString(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

// countingStore counts the database strategy's lookups and sliding-expiry
// writes on a real store.
type countingStore struct {
	*models.Store
	reads, extends atomic.Int64
}

func (c *countingStore) ReadSession(ctx context.Context, tokenHash string, row *models.SessionRow) error {
	c.reads.Add(1)
	return c.Store.ReadSession(ctx, tokenHash, row)
}

func (c *countingStore) ExtendSession(ctx context.Context, tokenHash string, expires, seen time.Time) error {
	c.extends.Add(1)
	return c.Store.ExtendSession(ctx, tokenHash, expires, seen)
}

// dialects are the databases the database strategy is tested on.
var dialects = []string{models.DialectSQLite, models.DialectPostgres}

// eachDialect runs f as one subtest per dialect.
func eachDialect(t *testing.T, f func(t *testing.T, dialect string)) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) { f(t, d) })
	}
}

// openStore opens a fresh, migrated store of the dialect.
func openStore(t *testing.T, dialect string) *models.Store {
	t.Helper()
	return connect(t, freshDatabase(t, dialect))
}

// freshDatabase names a new database of the dialect: a file in the test's
// folder, or a database on the shared PostgreSQL server.
func freshDatabase(t *testing.T, dialect string) models.Config {
	c := models.Config{Dialect: dialect, DSN: filepath.Join(t.TempDir(), "test.db")}
	if dialect == models.DialectPostgres {
		c.DSN = pgtest.NewDatabase(t, postgresURL)
	}
	return c
}

// connect opens c (migrating it) and closes the store when the test ends.
func connect(t *testing.T, c models.Config) *models.Store {
	t.Helper()
	s, err := models.Connect(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newDatabaseHarness(t *testing.T, dialect string, absolute time.Duration) (harness, *countingStore) {
	return newCachedDatabaseHarness(t, dialect, absolute, 0)
}

// newCachedDatabaseHarness is newDatabaseHarness with a lookup cache
// keeping rows for cacheTTL (real time; 0: none).
func newCachedDatabaseHarness(t *testing.T, dialect string, absolute, cacheTTL time.Duration) (harness, *countingStore) {
	store := &countingStore{Store: openStore(t, dialect)}
	clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
	life := session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, AbsoluteMaxAge: absolute, Now: clk.Now}
	strategy, err := session.NewDatabase(store, cookieName, cookies.Writer{}, life).WithLookupCache(cacheTTL, 0)
	require.NoError(t, err)
	return harness{
		strategy: strategy,
		clock:    clk,
		newUser: func(t *testing.T) session.User {
			u := models.User{ID: models.NewID(), Name: str("Ada"), Email: str(models.NewID() + "@example.com"), Image: nil}
			require.NoError(t, store.CreateUser(context.Background(), &u))
			return session.User{ID: u.ID, Name: u.Name, Email: u.Email, Image: u.Image}
		},
		stored: func(t *testing.T) int {
			c, err := store.Count(context.Background())
			require.NoError(t, err)
			return int(c.Sessions)
		},
	}, store
}

func newJWTHarness(format jwt.Format) constructor {
	return func(t *testing.T, absolute time.Duration) harness {
		clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
		life := session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, AbsoluteMaxAge: absolute, Now: clk.Now}
		s, err := session.NewJWT([]string{secret}, format, cookieName, cookies.Writer{}, life)
		require.NoError(t, err)
		return harness{
			strategy: s,
			clock:    clk,
			newUser: func(*testing.T) session.User {
				return session.User{ID: models.NewID(), Name: str("Jo"), Email: str("jo@example.com"), Image: str("https://img.example.com/jo.png")}
			},
			stored: func(*testing.T) int { return -1 },
		}
	}
}

func TestConformanceDatabase(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		newHarness := func(t *testing.T, absolute time.Duration) harness {
			h, _ := newDatabaseHarness(t, dialect, absolute)
			return h
		}
		runConformance(t, newHarness)
		require.Equal(t, "database", newHarness(t, 0).strategy.Name())
	})
}

func TestConformanceJWTv4(t *testing.T) {
	runConformance(t, newJWTHarness(jwt.V4))
	require.Equal(t, "jwt", newJWTHarness(jwt.V4)(t, 0).strategy.Name())
}

func TestConformanceJWTv5(t *testing.T) {
	runConformance(t, newJWTHarness(jwt.V5))
}

// TestConformanceJWTFixedClaims: the app's jwt strategy when no hook of
// its own can change the claims (WithFixedClaims, Refresh compares
// nothing) behaves as the comparing one wherever the claims stay put.
func TestConformanceJWTFixedClaims(t *testing.T) {
	for _, format := range []jwt.Format{jwt.V4, jwt.V5} {
		t.Run(format.String(), func(t *testing.T) {
			runConformance(t, func(t *testing.T, absolute time.Duration) harness {
				h := newJWTHarness(format)(t, absolute)
				h.strategy.(*session.JWT).WithFixedClaims()
				h.fixedClaims = true
				return h
			})
		})
	}
}

// TestDatabaseSlidingExpiry: the row is extended at most once per update_age.
func TestDatabaseSlidingExpiry(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		for _, ttl := range []time.Duration{0, time.Minute} { // without and with a lookup cache
			t.Run("cache_ttl="+ttl.String(), func(t *testing.T) { testSlidingExpiry(t, dialect, ttl) })
		}
	})
}

func testSlidingExpiry(t *testing.T, dialect string, cacheTTL time.Duration) {
	h, store := newCachedDatabaseHarness(t, dialect, 0, cacheTTL)
	b := browser{}
	start := h.clock.Now()
	create(t, h, b, h.newUser(t), nil)
	tokenHash := session.HashToken(b[cookieName])
	expires := func() time.Time {
		row, err := store.SessionAndUser(context.Background(), tokenHash)
		require.NoError(t, err)
		return row.Expires.UTC()
	}
	// visit reads and refreshes the session and returns the session
	// cookie the answer sets, if any: only an extension sets it, so the
	// cookie always expires with its row.
	visit := func() *http.Cookie {
		s, _ := read(t, h, b)
		require.NotNil(t, s)
		var set *http.Cookie
		for _, line := range refresh(t, h, b, s).Header().Values("Set-Cookie") {
			c, err := http.ParseSetCookie(line)
			require.NoError(t, err)
			require.Equal(t, cookieName, c.Name, "only the session cookie")
			require.Nil(t, set, "one Set-Cookie")
			set = c
		}
		return set
	}
	require.True(t, start.Add(maxAge).Equal(expires()))

	// Many visits within update_age: no write, no cookie.
	for range 23 {
		h.clock.Add(time.Hour)
		require.Nil(t, visit(), "no extension, no Set-Cookie")
	}
	h.clock.Add(time.Hour - time.Second)
	require.Nil(t, visit())
	require.Zero(t, store.extends.Load())
	require.True(t, start.Add(maxAge).Equal(expires()), "before/after: unchanged")

	// Once update_age has passed: exactly one write, to now+max_age, and
	// the cookie re-set with that expiry.
	h.clock.Add(time.Second)
	set := visit()
	require.EqualValues(t, 1, store.extends.Load())
	extended := expires()
	require.True(t, h.clock.Now().Add(maxAge).Equal(extended), "extended to %v", extended)
	require.NotNil(t, set, "the extension re-sets the cookie")
	require.True(t, extended.Equal(set.Expires), "cookie Expires %v, row %v", set.Expires, extended)

	// And none again until another update_age has passed.
	for range 10 {
		h.clock.Add(2 * time.Hour)
		require.Nil(t, visit())
	}
	require.EqualValues(t, 1, store.extends.Load())
	require.True(t, extended.Equal(expires()))
	h.clock.Add(4 * time.Hour)
	visit()
	require.EqualValues(t, 2, store.extends.Load())
}

// TestDatabaseTokenIsHashed: the cookie holds a random token; the table only its SHA-256.
func TestDatabaseTokenIsHashed(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		h, store := newDatabaseHarness(t, dialect, 0)
		b := browser{}
		u := h.newUser(t)
		create(t, h, b, u, nil)
		tok := b[cookieName]
		require.Len(t, tok, 36)
		rows, err := store.SessionsOf(context.Background(), u.ID)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Equal(t, session.HashToken(tok), rows[0].TokenHash)
		require.NotContains(t, rows[0].TokenHash, tok)
		require.Regexp(t, `^[0-9a-f]{64}$`, rows[0].TokenHash)
	})
}

// TestJWTChunking: large claims are split into name.0, name.1, ... and read back.
func TestJWTChunking(t *testing.T) {
	h := newJWTHarness(jwt.V4)(t, 0)
	u := h.newUser(t)
	claims := session.DefaultClaims(u)
	groups := make([]string, 1500)
	for i := range groups {
		groups[i] = randomString(4)
	}
	claims["groups"] = groups
	b := browser{"next-auth.session-token": "stale-single"}
	rec := create(t, h, b, u, claims)
	names := keys(b.sessionCookies())
	require.GreaterOrEqual(t, len(names), 3, "chunked: %v", names)
	require.NotContains(t, names, cookieName, "the stale unchunked cookie is cleared")
	for i := range len(names) {
		require.Contains(t, names, cookieName+"."+strconv.Itoa(i))
	}
	require.Contains(t, strings.Join(rec.Header().Values("Set-Cookie"), "\n"), cookieName+"=; Path=/; Max-Age=0")
	s, _ := read(t, h, b)
	require.NotNil(t, s)
	require.Len(t, s.Claims["groups"], 1500)

	// A garbage chunk spoils the whole token.
	bad := b.clone()
	bad[cookieName+".1"] = "xxxx"
	s, sent := read(t, h, bad)
	require.Nil(t, s)
	require.True(t, sent)
	rec = httptest.NewRecorder()
	h.strategy.Clear(rec, bad.request())
	bad.apply(rec.Header())
	require.Empty(t, bad.sessionCookies(), "clearing removes every chunk")
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
