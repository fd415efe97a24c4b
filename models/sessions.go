package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/latchkey-auth/latchkey/models/events"
	"github.com/latchkey-auth/latchkey/models/onerow"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// NewID returns a random UUID v4 string for primary keys.
func NewID() string { return uuid.NewString() }

// newSessionID is a new session's primary key: a UUID v7, whose first 48
// bits are the time, so that a session's key lands on the last leaf of
// the primary-key index instead of a random one. Sign-ins write
// sessions all day: with random keys each insert changed (and on
// PostgreSQL, after each checkpoint, wrote whole into the WAL) one more
// random page of an index of millions of entries (issue #36). The time
// it reveals is the session's created_at, which its owner sees anyway.
func newSessionID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return NewID()
}

// NewSession is a session for CreateSession. SignedIn becomes its CreatedAt
// (the absolute lifetime counts from it, so it is the caller's clock) and
// first LastSeen; AMR, Device and Network are as in Session.
type NewSession struct {
	UserID, TokenHash, AMR, Device, Network string
	SignedIn, Expires                       time.Time
	// Provider is how the user signed in, for session.created only (not stored).
	Provider string
}

// CreateSession stores a session for n.UserID under the hash of its token.
func (s *Store) CreateSession(ctx context.Context, n NewSession) error {
	seen := dbTime(n.SignedIn)
	row := Session{ID: newSessionID(), TokenHash: n.TokenHash, UserID: n.UserID, Expires: dbTime(n.Expires), CreatedAt: seen,
		AMR: n.AMR, Device: n.Device, Network: n.Network, LastSeen: &seen}
	return s.Change(ctx, []string{events.SessionCreated}, func(tx *gorm.DB) ([]events.Event, error) {
		if err := tx.Omit("User").Create(&row).Error; err != nil {
			return nil, fmt.Errorf("create session: %w", conflict(err))
		}
		return []events.Event{{Type: events.SessionCreated, Data: events.Session{UserID: n.UserID, SessionID: row.ID,
			Provider: n.Provider, Methods: strings.Fields(n.AMR), Strategy: StrategyDatabase}}}, nil
	})
}

// SessionsOf returns a user's sessions, soonest expiry first.
func (s *Store) SessionsOf(ctx context.Context, userID string) ([]Session, error) {
	var out []Session
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("expires").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// sessionAndUserSQL is GET /session's only query: one lookup on the unique
// token_hash index joined with the user's primary key, in the dialect's
// placeholder style. It reads created_at (the sign-in time) too, so the
// absolute lifetime costs no second query, and neither the token hash,
// which the caller has, nor the row's id (the session is found, extended
// and deleted by its token hash): every column costs the driver a few
// allocations per query.
//
// On SQLite two more things are shaped for mattn/go-sqlite3, which copies
// strings out of SQLite on every query:
//   - the text columns are read through CAST(... AS TEXT), which changes no
//     value (they hold text or NULL) but makes them expressions, which
//     have no declared type: SQLite reports a text column's as "TEXT", and
//     the driver lower-cases each declared type into a new string. The
//     datetime columns keep theirs: the driver parses them by it;
//   - every column is named "": database/sql asks for the names on every
//     query, only to count them, and the driver copies each into a new
//     string; an empty one is no copy. Scan goes by position, so nothing
//     reads the names;
//   - INDEXED BY names schema step 15's covering indexes, which hold every
//     column read: one leaf of each instead of the tables too, which at
//     millions of sessions are page reads from the file (issue #36). The
//     planner would pick them given ANALYZE's statistics; naming them
//     keeps the plan whatever the statistics say.
func (s *Store) sessionAndUserSQL(column string) string {
	if s.dialect == DialectPostgres {
		if column != "" {
			column = ", " + column
		}
		return `SELECT s.user_id, s.expires, s.created_at, s.amr, u.name, u.email, u.image, u.email_verified IS NOT NULL` + column + `
FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`
	}
	if column != "" {
		column = ", " + column + ` AS ""`
	}
	return `SELECT CAST(s.user_id AS TEXT) AS "", s.expires AS "", s.created_at AS "", CAST(s.amr AS TEXT) AS "",
CAST(u.name AS TEXT) AS "", CAST(u.email AS TEXT) AS "", CAST(u.image AS TEXT) AS "",
u.email_verified IS NOT NULL AS ""` + column + `
FROM sessions s INDEXED BY idx_sessions_lookup JOIN users u INDEXED BY idx_users_lookup ON u.id = s.user_id WHERE s.token_hash = ?`
}

// SessionLookupSQL is ReadSession's statement with column (an expression
// over s and u; "" for none) read last, scanned into SessionRow.Groups:
// forward-auth's lookup reads the user's stored groups so
// (groupstore.Store.ReadSession). The EXPLAIN test of the request paths
// (models/scalefill) checks both: they bypass GORM.
func (s *Store) SessionLookupSQL(column string) string { return s.sessionAndUserSQL(column) }

// SessionRow is a session and its user as GET /session reads them
// (ReadSession): values, not pointers, so a caller can reuse one row for
// every lookup.
type SessionRow struct {
	UserID  string
	Expires time.Time
	// CreatedAt is the sign-in time. Only a hand edit leaves it NULL; its
	// Time is then the zero time: the sign-in is unknown, so an absolute
	// lifetime counts the session as over.
	CreatedAt sql.NullTime
	// AMR is the session's sign-in methods (Session.AMR).
	AMR                string
	Name, Email, Image sql.NullString
	// EmailVerified is the user's emailVerified IS NOT NULL: forward-auth
	// trusts a verified address only.
	EmailVerified bool
	// Groups is the user's stored groups, comma-separated, NULL for none:
	// forward-auth's lookup only (SessionLookupSQL, Targets(true)).
	Groups sql.NullString

	// dest are Scan's targets, this row's fields: built once per row
	// instead of a variadic slice per lookup. self tells a copied row,
	// whose dest would point into the original, to build its own.
	dest []any
	self *SessionRow
}

// Targets are Scan's destinations for the lookup's columns, in order;
// withGroups adds Groups for SessionLookupSQL's column.
func (r *SessionRow) Targets(withGroups bool) []any {
	if r.self != r {
		r.self = r
		r.dest = []any{&r.UserID, &r.Expires, &r.CreatedAt, &r.AMR, &r.Name, &r.Email, &r.Image, &r.EmailVerified, &r.Groups}
	}
	if withGroups {
		return r.dest
	}
	return r.dest[:len(r.dest)-1]
}

// ReadSession finds a session and its user in one indexed query and scans
// them into row. It bypasses GORM's reflection (a prepared statement and a
// plain Scan) because it runs on every page load of every client.
//
// A lookup cut by a fail-over is made once more on a fresh connection
// (package failover): it is a read, so repeating it is safe, and the client
// would otherwise take the empty answer for a sign-out.
func (s *Store) ReadSession(ctx context.Context, tokenHash string, row *SessionRow) error {
	err := s.readSession(ctx, tokenHash, row)
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.countFailure(err)
		return fmt.Errorf("find session: %w", err)
	}
	return err
}

// readSession is QueryRowContext(...).Scan without the *sql.Row it
// allocates.
//
// On SQLite the request's context is not handed to the driver: a
// cancellable context costs database/sql a goroutine per query and
// mattn/go-sqlite3 another, with a channel, per row, and a local lookup on
// a unique index has nothing worth cancelling (in WAL mode a reader does
// not wait for writers).
func (s *Store) readSession(ctx context.Context, tokenHash string, row *SessionRow) error {
	if s.dialect == DialectSQLite {
		ctx = context.Background()
	}
	rows, err := s.sessionStmt.QueryContext(ctx, tokenHash)
	if err != nil {
		return err
	}
	err = onerow.From(rows, row.Targets(false)...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// SessionAndUser is ReadSession's row as a Session with its User. Its ID
// is left empty: the lookup does not read it.
func (s *Store) SessionAndUser(ctx context.Context, tokenHash string) (*Session, error) {
	var r SessionRow
	if err := s.ReadSession(ctx, tokenHash, &r); err != nil {
		return nil, err
	}
	return &Session{
		TokenHash: tokenHash, UserID: r.UserID, Expires: r.Expires, CreatedAt: r.CreatedAt.Time, AMR: r.AMR,
		User: User{ID: r.UserID, Name: nullable(r.Name), Email: nullable(r.Email), Image: nullable(r.Image)},
	}, nil
}

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// ExtendSession moves the expiry of the session stored under tokenHash
// (sliding sessions) and its LastSeen to seen: extensions are rare (once
// per update_age), so "last seen" costs no write of its own.
func (s *Store) ExtendSession(ctx context.Context, tokenHash string, expires, seen time.Time) error {
	err := s.db.WithContext(ctx).Model(&Session{}).Where("token_hash = ?", tokenHash).
		Updates(map[string]any{"expires": dbTime(expires), "last_seen": dbTime(seen)}).Error
	if err != nil {
		return fmt.Errorf("extend session: %w", err)
	}
	return nil
}

// DeleteSession removes a session by token hash (a sign-out); a missing
// one is not an error and reports nothing.
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	err := s.Change(ctx, []string{events.SessionEnded}, func(tx *gorm.DB) ([]events.Event, error) {
		var gone []Session
		if err := tx.Clauses(clause.Returning{Columns: []clause.Column{{Name: "id"}, {Name: "user_id"}}}).
			Where("token_hash = ?", tokenHash).Delete(&gone).Error; err != nil {
			return nil, err
		}
		evs := make([]events.Event, 0, len(gone))
		for _, g := range gone {
			evs = append(evs, sessionEnded(ctx, g.UserID, g.ID, events.ReasonSignOut))
		}
		return evs, nil
	})
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteUserSessions removes every session of a user (a sign-out of every
// device, database strategy).
func (s *Store) DeleteUserSessions(ctx context.Context, userID string) error {
	err := s.Change(ctx, []string{events.SessionEnded}, func(tx *gorm.DB) ([]events.Event, error) {
		r := tx.Where("user_id = ?", userID).Delete(&Session{})
		if r.Error != nil || r.RowsAffected == 0 {
			return nil, r.Error
		}
		return []events.Event{{Type: events.SessionEnded, Data: events.Session{UserID: userID, Strategy: StrategyDatabase,
			Scope: events.ScopeAll, Reason: events.ReasonSignOutEverywhere, Actor: events.ActorOf(ctx)}}}, nil
	})
	if err != nil {
		return fmt.Errorf("delete user sessions: %w", err)
	}
	return nil
}
