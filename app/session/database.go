package session

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/failover"
)

// Store is what the database strategy needs from storage.
type Store interface {
	CreateSession(ctx context.Context, n models.NewSession) error
	ReadSession(ctx context.Context, tokenHash string, row *models.SessionRow) error
	ExtendSession(ctx context.Context, tokenHash string, expires, seen time.Time) error
	DeleteSession(ctx context.Context, tokenHash string) error
	DeleteUserSessions(ctx context.Context, userID string) error
}

// maxDBTokenLen: our tokens are 36-character UUIDs; anything far longer is junk.
const maxDBTokenLen = 128

// Database keeps sessions in the sessions table; the cookie holds a random
// token and the table only its SHA-256.
type Database struct {
	store  Store
	name   string
	writer cookies.Writer
	life   Lifetime
	// revoked are the revocations polled from the database; nil: none.
	revoked *Revocations
	// rows are the scan targets of Read's lookup, reused: Read copies what
	// it keeps into the Session it returns.
	rows sync.Pool
	// cache keeps valid rows for session.cache_ttl; nil: every Read queries.
	cache *lookupCache
	// records list and end a user's rows for the account page
	// (records.go); clientIP tells where a session starts. nil: none.
	records  SessionRecords
	clientIP ClientIP
	// groups reads a session with its user's stored groups, for
	// ReadWithGroups; nil: that reads as Read does.
	groups GroupsReader
}

// GroupsReader reads a session, its user and the user's stored groups
// (row.Groups) in one statement: models/groupstore.Store.ReadSession.
type GroupsReader interface {
	ReadSession(ctx context.Context, tokenHash string, row *models.SessionRow) error
}

// WithGroups lets ReadWithGroups read the user's stored groups in the
// session's own statement.
func (d *Database) WithGroups(g GroupsReader) *Database {
	d.groups = g
	return d
}

// WithRecords lets the account page list and end sessions one by one, and
// records where each starts (its device and network); clientIP tells the
// client's address as the trusted proxies do (nil: the peer's).
func (d *Database) WithRecords(r SessionRecords, clientIP ClientIP) *Database {
	d.records, d.clientIP = r, clientIP
	return d
}

// NewDatabase returns the database strategy using cookie name.
func NewDatabase(store Store, name string, w cookies.Writer, life Lifetime) *Database {
	d := &Database{store: store, name: name, writer: w, life: life}
	d.rows.New = func() any { return new(models.SessionRow) }
	return d
}

// WithRevocations makes Read end sessions whose sign-in a revocation
// covers. Revoking deletes the rows already; this also ends one that a
// sign-in under way at that moment stored just after, as the jwt strategy
// would refuse its token.
func (d *Database) WithRevocations(r *Revocations) *Database {
	d.revoked = r
	return d
}

// WithLookupCache makes Read keep valid rows for ttl (session.cache_ttl)
// and answer from them (lookupCache says what that may and may not
// change), and from copies up to grace old while the database is
// unavailable (session.outage_grace); ttl 0 keeps none.
func (d *Database) WithLookupCache(ttl, grace time.Duration) (*Database, error) {
	c, err := newLookupCache(ttl, grace)
	if err != nil {
		return nil, err
	}
	d.cache = c
	return d, nil
}

// Name implements Strategy.
func (d *Database) Name() string { return "database" }

// HashToken is how a session token is stored: sha256 hex. The token has 122
// random bits, so no secret or slow hash is needed.
func HashToken(token string) string {
	return hexSum(tokenSum(token))
}

// tokenSum is the SHA-256 of a token: the lookup and decode caches' key,
// and in hex the stored hash of a database session.
func tokenSum(token string) [sha256.Size]byte {
	var buf [maxHashedOnStack]byte // a longer token makes append allocate
	return sha256.Sum256(append(buf[:0], token...))
}

// maxHashedOnStack is the token length up to which tokenSum allocates
// nothing: database tokens are 36 bytes, latchkey's JWTs with next-auth's
// claims 400–800 (the jwt strategy's decode cache keys on tokenSum too).
const maxHashedOnStack = 2048

func hexSum(sum [sha256.Size]byte) string {
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:]) // one allocation: the string itself
}

func (d *Database) token(r *http.Request) (string, bool) {
	tok, ok := cookies.Value(r, d.name)
	if !ok {
		// Chunks (name.0, name.1, ...) left by the jwt strategy count as a
		// sent but invalid token, so they get cleared as next-auth does.
		return "", cookies.ReadChunked(r, d.name) != ""
	}
	return tok, true
}

// Read looks the session up by token hash in one indexed query joined with
// its user (and its sign-in time), or finds it in the lookup cache. A row
// past its expiry or its absolute end, or revoked, is deleted, not just
// ignored: a later, longer absolute_max_age cannot revive it, and the table
// does not keep dead sessions. Only a row just read decides that: a cached
// one that is not plainly alive is read again.
func (d *Database) Read(ctx context.Context, r *http.Request) (*Session, bool, error) {
	return d.read(ctx, r, nil)
}

// StoredGroups are a user's stored groups as ReadWithGroups read them
// with the session.
type StoredGroups struct {
	Names []string // sorted; nil: none
	// Read: the session came from the database, with the groups; false
	// when it came from the lookup cache (Names is then empty, not known).
	Read bool
}

// ReadWithGroups is Read for forward-auth, which needs the user's stored
// groups too: a session read from the database (not the lookup cache)
// comes with them, read in the same statement (WithGroups; without it
// none come).
func (d *Database) ReadWithGroups(ctx context.Context, r *http.Request) (*Session, StoredGroups, error) {
	var g StoredGroups
	into := &g
	if d.groups == nil {
		into = nil
	}
	s, _, err := d.read(ctx, r, into)
	return s, g, err
}

// read is Read, and with groups not nil ReadWithGroups.
func (d *Database) read(ctx context.Context, r *http.Request, groups *StoredGroups) (*Session, bool, error) {
	tok, sent := d.token(r)
	if !sent {
		return nil, false, nil
	}
	if tok == "" || len(tok) > maxDBTokenLen {
		return nil, true, nil
	}
	sum := tokenSum(tok)
	row := d.rows.Get().(*models.SessionRow)
	defer d.rows.Put(row)
	now := d.life.Now()
	if d.cache.get(sum, row) && d.alive(row, now) {
		return d.session(row), true, nil
	}
	tk := d.cache.begin()
	hash := hexSum(sum)
	var err error
	if groups != nil {
		err = d.groups.ReadSession(ctx, hash, row)
	} else {
		err = d.store.ReadSession(ctx, hash, row)
	}
	if errors.Is(err, models.ErrNotFound) {
		return nil, true, nil
	}
	if err != nil {
		if errors.Is(err, failover.ErrUnavailable) && d.cache.getStale(sum, row) && d.alive(row, now) {
			return d.session(row), true, nil
		}
		return nil, true, fmt.Errorf("read database session: %w", err)
	}
	if !d.alive(row, now) {
		if err := d.store.DeleteSession(ctx, hash); err != nil {
			return nil, true, err
		}
		return nil, true, nil
	}
	d.cache.put(sum, tk, row)
	if groups != nil {
		*groups = StoredGroups{Names: splitGroups(row.Groups), Read: true}
	}
	return d.session(row), true, nil
}

// splitGroups is a comma-separated list of group names (names hold no
// comma), sorted; nil for none.
func splitGroups(v sql.NullString) []string {
	if !v.Valid || v.String == "" {
		return nil
	}
	names := strings.Split(v.String, ",")
	slices.Sort(names)
	return names
}

// alive reports whether row's session is neither past its expiry or its
// absolute end nor revoked at now.
func (d *Database) alive(row *models.SessionRow, now time.Time) bool {
	signedIn := row.CreatedAt.Time
	return row.Expires.After(now) && !d.life.over(signedIn, now) && !d.revoked.Revoked(row.UserID, signedIn)
}

// session is row's Session. The user's strings live in the Session, not
// in the reused row.
func (d *Database) session(row *models.SessionRow) *Session {
	signedIn := row.CreatedAt.Time
	s := &Session{
		User: User{ID: row.UserID, EmailVerified: row.EmailVerified && row.Email.Valid},
		// A row stored before absolute_max_age was set or shortened may
		// expire later than the limit allows; report the limit.
		Expires:  d.life.capped(signedIn, row.Expires),
		SignedIn: signedIn,
		amr:      row.AMR,
	}
	s.User.Name = keep(&s.userFields[0], row.Name)
	s.User.Email = keep(&s.userFields[1], row.Email)
	s.User.Image = keep(&s.userFields[2], row.Image)
	return s
}

// extension is the expiry Refresh gives s at now, and whether the row is
// due to be moved to it: at most once per update_age, and only when that
// moves it (once capped by the absolute end, there is nothing to move).
func (d *Database) extension(s *Session, now time.Time) (time.Time, bool) {
	next := d.life.capped(s.SignedIn, now.Add(d.life.MaxAge))
	due := !s.Expires.Add(-d.life.MaxAge).Add(d.life.UpdateAge).After(now) && next.After(s.Expires)
	return next, due
}

// keep stores a nullable column's value in field and points at it.
func keep(field *string, v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	*field = v.String
	return field
}

// Refresh extends the row at most once per update_age, never past the
// absolute end, and re-sets the cookie with the row's new expiry. Once the
// extension is capped there is nothing to move, so nothing is written.
//
// next-auth v4 re-sets the cookie on every call (Expires now + maxAge)
// while it extends the row once per updateAge; latchkey sets it only with
// an extension, so the cookie expires with its row and a GET /session that
// extends nothing sends no Set-Cookie (database-cookie-set-per-update-age
// in docs/compatibility.md).
func (d *Database) Refresh(ctx context.Context, w http.ResponseWriter, r *http.Request, s *Session) error {
	now := d.life.Now()
	newExpiry, due := d.extension(s, now)
	if !due {
		return nil
	}
	tok, _ := d.token(r)
	// s may come from the cache, up to its TTL old: extending a row
	// another instance extended or deleted meanwhile changes nothing that
	// matters (a like expiry; no row). The kept copy, with the old
	// expiry, is dropped, or every hit would extend again.
	sum := tokenSum(tok)
	err := d.store.ExtendSession(ctx, hexSum(sum), newExpiry, now)
	if err != nil {
		// The copy stays: during an outage it answers (getStale), and the
		// next hit tries the extension again.
		return err
	}
	d.cache.forget(sum)
	d.writer.SetChunked(w, r, d.name, tok, newExpiry) // one cookie; clears strays (cookies.Writer.SetChunked)
	return nil
}

// Create stores a new session, signed in now, and sets its cookie.
func (d *Database) Create(ctx context.Context, w http.ResponseWriter, r *http.Request, u User, _ map[string]any) error {
	tok := random.UUID()
	now := d.life.Now()
	expires := d.life.capped(now, now.Add(d.life.MaxAge))
	device, network := "", ""
	if d.records != nil {
		device, network = describe(r, d.clientIP)
	}
	err := d.store.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: HashToken(tok),
		AMR: strings.Join(u.Methods, " "), Device: device, Network: network, SignedIn: now, Expires: expires, Provider: u.Provider})
	if err != nil {
		return err
	}
	d.writer.SetChunked(w, r, d.name, tok, expires) // one cookie; clears strays (cookies.Writer.SetChunked)
	return nil
}

// Destroy deletes the row (if any) and clears the cookie.
// The cookie is cleared even when the delete fails, so the browser is signed
// out either way; the error tells the caller the row may remain. The delete
// runs to its end when the browser hangs up meanwhile: the cookie it kept,
// never having seen the answer that cleared it, must not sign it in again.
func (d *Database) Destroy(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	d.Clear(w, r)
	tok, sent := d.token(r)
	if !sent || tok == "" || len(tok) > maxDBTokenLen {
		return nil
	}
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	sum := tokenSum(tok)
	defer d.cache.ended(sum) // after the delete: see lookupCache.ended
	return d.store.DeleteSession(ctx, hexSum(sum))
}

// UsersChanged implements ProfileCache: a lookup that follows it reads
// the database, so GET /session and forward-auth show the change at once
// on this instance (on the others within session.cache_ttl).
func (d *Database) UsersChanged() { d.cache.changed() }

// Clear implements Strategy.
func (d *Database) Clear(w http.ResponseWriter, r *http.Request) {
	d.writer.ClearChunked(w, r, d.name)
}
