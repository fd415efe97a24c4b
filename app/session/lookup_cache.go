package session

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/latchkey-auth/latchkey/models"
)

// lookupCacheSize bounds the cache: 8192 rows of a few hundred bytes each.
// More sessions than that active within one TTL only cost more queries.
const lookupCacheSize = 8192

// lookupCache keeps the database strategy's valid session rows for at most
// ttl (session.cache_ttl), so lookups that come in bursts (a page load's
// GET /session calls, forward-auth on every request a page makes) cost one
// query, not one each.
//
// What it may never do is keep a session alive that was ended:
//   - on this instance, every sign-out (Destroy) invalidates
//     every row at once, and a revocation (password reset or change,
//     sign-out everywhere) is seen through Revocations, which the strategy
//     asks on every hit as on every query;
//   - on another instance, or by `latchkey sessions revoke`, the row is
//     deleted in the database, which this instance reads again once its
//     copy is ttl old: the session ends here within ttl.
//
// Only valid rows are kept, and the strategy re-checks expiry, the
// absolute lifetime and revocations on every hit; a copy that fails them
// is read again, so only a row just read decides to delete a session. A
// hit may decide an extension (Refresh then drops the copy). Not-found
// answers are never kept, so a sign-in on another instance is seen at once.
type lookupCache struct {
	ttl time.Duration
	// grace is how old a copy may be when the database is unavailable
	// (session.outage_grace; getStale).
	grace time.Duration
	// gen is the invalidation generation: a row is served only while the
	// generation it was read under is current. A lookup takes it before
	// its query (begin), and a sign-out moves it after its delete, so a row
	// read while a sign-out was deleting it carries the older generation
	// and is never served.
	gen atomic.Uint64
	// bulk is the generation of the invalidations that may end sessions
	// other than the one sign-out's (sign out everywhere, ending another
	// device): getStale serves a copy only while it is the one the copy was
	// read under. A single sign-out (ended) moves gen, not bulk, and drops
	// its own copy, so one user signing out does not take every other
	// user's outage grace away.
	bulk atomic.Uint64
	rows *lru.Cache[[sha256.Size]byte, cachedRow]
}

// cachedRow is a copy of a models.SessionRow's values and when they were
// read (monotonic: the TTL is real time, whatever clock sessions use).
type cachedRow struct {
	userID             string
	expires            time.Time
	createdAt          sql.NullTime
	amr                string
	name, email, image sql.NullString
	emailVerified      bool
	read               time.Time
	gen, bulk          uint64
}

// newLookupCache returns a cache keeping rows for ttl, or nil (no cache)
// when ttl is not positive.
func newLookupCache(ttl, grace time.Duration) (*lookupCache, error) {
	if ttl <= 0 {
		return nil, nil
	}
	rows, err := lru.New[[sha256.Size]byte, cachedRow](lookupCacheSize)
	if err != nil {
		return nil, fmt.Errorf("session lookup cache: %w", err)
	}
	return &lookupCache{ttl: ttl, grace: grace, rows: rows}, nil
}

// ticket is taken before a query whose row may be kept: the generation
// then current and the time the query began. A row counts as read when its
// query began, so a session deleted elsewhere while the query ran is still
// served no longer than ttl after the delete.
type ticket struct {
	gen, bulk uint64
	at        time.Time
}

// begin takes a ticket; a nil cache's is never used.
func (c *lookupCache) begin() ticket {
	if c == nil {
		return ticket{}
	}
	return ticket{gen: c.gen.Load(), bulk: c.bulk.Load(), at: time.Now()}
}

// get fills row with the copy kept under key, if it is younger than the
// TTL and of the current generation.
func (c *lookupCache) get(key [sha256.Size]byte, row *models.SessionRow) bool {
	if c == nil {
		return false
	}
	return c.getWithin(key, row, c.ttl)
}

// getStale is get for a database outage: a copy up to the grace old
// answers, so a signed-in user is not told they are signed out because
// the primary is failing over. A sign-out on this instance still ends it
// at once (the generation), and the caller still checks expiry and
// revocations.
func (c *lookupCache) getStale(key [sha256.Size]byte, row *models.SessionRow) bool {
	if c == nil || c.grace <= 0 {
		return false
	}
	e, ok := c.rows.Get(key)
	if !ok || e.bulk != c.bulk.Load() || time.Since(e.read) >= c.grace {
		return false
	}
	e.copyTo(row)
	return true
}

func (c *lookupCache) getWithin(key [sha256.Size]byte, row *models.SessionRow, age time.Duration) bool {
	e, ok := c.rows.Get(key)
	if !ok || e.gen != c.gen.Load() || time.Since(e.read) >= age {
		return false
	}
	e.copyTo(row)
	return true
}

// copyTo fills row with the kept values.
func (e *cachedRow) copyTo(row *models.SessionRow) {
	row.UserID, row.Expires, row.CreatedAt, row.AMR = e.userID, e.expires, e.createdAt, e.amr
	row.Name, row.Email, row.Image, row.EmailVerified = e.name, e.email, e.image, e.emailVerified
}

// put keeps row under key, read with ticket tk.
func (c *lookupCache) put(key [sha256.Size]byte, tk ticket, row *models.SessionRow) {
	if c == nil || tk.gen != c.gen.Load() {
		// Read while sessions were being ended: never kept, so no copy of a
		// row a sign-out deleted under the query outlives it (getStale does
		// not look at gen).
		return
	}
	c.rows.Add(key, cachedRow{
		userID: row.UserID, expires: row.Expires, createdAt: row.CreatedAt, amr: row.AMR,
		name: row.Name, email: row.Email, image: row.Image, emailVerified: row.EmailVerified,
		read: tk.at, gen: tk.gen, bulk: tk.bulk,
	})
}

// forget drops the copy kept under key, after its row was extended.
func (c *lookupCache) forget(key [sha256.Size]byte) {
	if c != nil {
		c.rows.Remove(key)
	}
}

// invalidate makes every kept row unservable, in an outage too: called
// after this instance deleted sessions other than the request's own.
func (c *lookupCache) invalidate() {
	if c != nil {
		c.bulk.Add(1)
		c.gen.Add(1)
	}
}

// changed makes every kept row unservable by get (getStale may still
// serve one: a profile a moment old beats no answer in an outage): called
// after a user's profile (e-mail, name, image, verification) changed on
// this instance, which the kept copies carry.
func (c *lookupCache) changed() {
	if c != nil {
		c.gen.Add(1)
	}
}

// ended makes every kept row unservable by get and drops key's: called
// after a sign-out deleted that one session. The order matters: a lookup
// of key that began before the delete either puts its copy before the
// drop (and it is dropped) or after gen moved (and put keeps nothing).
func (c *lookupCache) ended(key [sha256.Size]byte) {
	if c != nil {
		c.gen.Add(1)
		c.rows.Remove(key)
	}
}
