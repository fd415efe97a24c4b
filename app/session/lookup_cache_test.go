package session_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// The conformance suite again, with the database strategy answering from
// a lookup cache whose rows outlive every subtest: every expiry, absolute
// end, sign-out and stale-cookie rule holds on cached rows too.
func TestConformanceDatabaseCached(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		runConformance(t, func(t *testing.T, absolute time.Duration) harness {
			h, _ := newCachedDatabaseHarness(t, dialect, absolute, time.Hour)
			return h
		})
	})
}

// A cached session makes no query until the TTL has passed; a sign-out on
// the same instance ends it at once, and the next lookup queries.
func TestLookupCacheQueriesOncePerTTL(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		const ttl = 300 * time.Millisecond
		h, store := newCachedDatabaseHarness(t, dialect, 0, ttl)
		b := browser{}
		create(t, h, b, h.newUser(t), nil)

		read1 := time.Now()
		for range 20 {
			s, _ := read(t, h, b)
			require.NotNil(t, s)
		}
		if time.Since(read1) < ttl { // a very slow machine may have passed the TTL
			require.EqualValues(t, 1, store.reads.Load(), "one query, then the cache")
		}
		time.Sleep(ttl)
		before := store.reads.Load()
		s, _ := read(t, h, b)
		require.NotNil(t, s)
		require.Equal(t, before+1, store.reads.Load(), "read again once the TTL has passed")

		stolen := b.clone()
		require.NoError(t, h.strategy.Destroy(context.Background(), httptest.NewRecorder(), b.request()))
		before = store.reads.Load()
		s, sent := read(t, h, stolen)
		require.Nil(t, s, "signed out on this instance: a copy of the cookie is dead at once")
		require.True(t, sent)
		require.Equal(t, before+1, store.reads.Load(), "the cache was not asked")
	})
}

// Two instances with caches on one database. A session signed out on B is
// refused on A within A's TTL, and a row A holds that B extended (the
// copy on A now looking expired) is read again, not deleted: only a row
// just read decides that a session is over.
func TestLookupCacheAcrossInstances(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		const ttl = 300 * time.Millisecond
		c := freshDatabase(t, dialect)
		clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
		life := session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, Now: clk.Now}
		storeA := connect(t, c)
		instance := func(store *models.Store, ttl time.Duration) harness {
			d, err := session.NewDatabase(store, cookieName, cookies.Writer{}, life).WithLookupCache(ttl, 0)
			require.NoError(t, err)
			return harness{strategy: d, clock: clk}
		}
		a, b := instance(storeA, time.Hour), instance(connect(t, c), ttl)
		u := models.User{ID: models.NewID(), Email: str("both@example.com")}
		require.NoError(t, storeA.CreateUser(context.Background(), &u))

		tab := browser{}
		create(t, a, tab, session.User{ID: u.ID, Email: u.Email}, nil)
		s, _ := read(t, a, tab) // A keeps the row, expiring at start+maxAge
		require.NotNil(t, s)
		firstExpiry := s.Expires

		clk.Add(updateAge + time.Minute)
		s, _ = read(t, b, tab)
		require.NotNil(t, s)
		refresh(t, b, tab, s) // B extends the row
		clk.Add(maxAge - updateAge)
		require.True(t, clk.Now().After(firstExpiry), "A's copy has expired by now")
		s, _ = read(t, a, tab)
		require.NotNil(t, s, "A reads the extended row again instead of ending the session")
		n, err := storeA.Count(context.Background())
		require.NoError(t, err)
		require.EqualValues(t, 1, n.Sessions, "and the row is still there")

		s, _ = read(t, b, tab) // B keeps the row for its short TTL
		require.NotNil(t, s)
		require.NoError(t, a.strategy.Destroy(context.Background(), httptest.NewRecorder(), tab.clone().request()))
		ended := time.Now()
		for {
			s, sent := read(t, b, tab)
			require.True(t, sent)
			if s == nil {
				break
			}
			require.Less(t, time.Since(ended), ttl+250*time.Millisecond, "B still answers a session A signed out")
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// A revocation this instance has read applies to a cached row at once, as
// to a queried one: the row is read again and deleted.
func TestLookupCacheHonoursRevocations(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		store := &countingStore{Store: openStore(t, dialect)}
		clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
		life := session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, Now: clk.Now}
		revoked := &session.Revocations{}
		d, err := session.NewDatabase(store, cookieName, cookies.Writer{}, life).WithRevocations(revoked).WithLookupCache(time.Hour, 0)
		require.NoError(t, err)
		h := harness{strategy: d, clock: clk}
		u := models.User{ID: models.NewID(), Email: str("revoked@example.com")}
		require.NoError(t, store.CreateUser(context.Background(), &u))
		b := browser{}
		create(t, h, b, session.User{ID: u.ID, Email: u.Email}, nil)
		for range 3 {
			s, _ := read(t, h, b)
			require.NotNil(t, s)
		}
		require.EqualValues(t, 1, store.reads.Load())

		clk.Add(time.Second)
		revoked.Set([]models.SessionRevocation{{UserID: u.ID, NotBefore: clk.Now().Unix()}}, nil)
		s, sent := read(t, h, b)
		require.Nil(t, s, "revoked: refused although cached")
		require.True(t, sent)
		n, err := store.Count(context.Background())
		require.NoError(t, err)
		require.Zero(t, n.Sessions, "and its row deleted")
	})
}

// A session due for its extension is answered from the cache too
// (forward-auth reads sessions and never extends them); GET /session's
// Refresh extends it once and drops the copy, so the next read fetches
// the extended row and no later hit extends again.
func TestLookupCacheExtendsOnce(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		h, store := newCachedDatabaseHarness(t, dialect, 0, time.Hour)
		b := browser{}
		create(t, h, b, h.newUser(t), nil)
		s, _ := read(t, h, b)
		require.NotNil(t, s)
		require.EqualValues(t, 1, store.reads.Load())

		h.clock.Add(updateAge + time.Minute)
		for range 5 {
			s, _ = read(t, h, b)
			require.NotNil(t, s)
		}
		require.EqualValues(t, 1, store.reads.Load(), "due for extension, still from the cache")
		require.Zero(t, store.extends.Load())

		refresh(t, h, b, s)
		require.EqualValues(t, 1, store.extends.Load())
		s, _ = read(t, h, b)
		require.NotNil(t, s)
		require.EqualValues(t, 2, store.reads.Load(), "the extended row is read again")
		require.True(t, h.clock.Now().Add(maxAge).Equal(s.Expires), "with its new expiry: %v", s.Expires)
		for range 3 {
			s, _ = read(t, h, b)
			refresh(t, h, b, s)
		}
		require.EqualValues(t, 1, store.extends.Load(), "extended once")
		require.EqualValues(t, 2, store.reads.Load())
	})
}

// Readers racing a sign-out on the same instance: once Destroy has
// returned, no read that starts after it answers the session, whatever the
// readers were caching while the delete ran (the generation a lookup takes
// before its query).
func TestLookupCacheSignOutRace(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		h, _ := newCachedDatabaseHarness(t, dialect, 0, time.Hour)
		for round := range 5 {
			b := browser{}
			create(t, h, b, h.newUser(t), nil)
			var signedOut, stop atomic.Bool
			var wg sync.WaitGroup
			late := make(chan string, 4)
			for range 4 {
				wg.Go(func() {
					for !stop.Load() {
						after := signedOut.Load()
						s, _, err := h.strategy.Read(context.Background(), b.clone().request())
						if err != nil {
							late <- err.Error()
							return
						}
						if after && s != nil {
							late <- "a read that began after the sign-out answered the session"
							return
						}
					}
				})
			}
			time.Sleep(20 * time.Millisecond)
			require.NoError(t, h.strategy.Destroy(context.Background(), httptest.NewRecorder(), b.request()))
			signedOut.Store(true)
			time.Sleep(20 * time.Millisecond)
			stop.Store(true)
			wg.Wait()
			close(late)
			for msg := range late {
				t.Fatalf("round %d: %s", round, msg)
			}
		}
	})
}
