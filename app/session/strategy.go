// Package session keeps signed-in state in the database (an opaque token in
// the cookie, its hash in the sessions table) or in the cookie itself (an
// encrypted JWT). Both implement Strategy and pass one conformance suite.
package session

import (
	"context"
	"net/http"
	"time"
)

// User is the identity a session carries.
type User struct {
	ID    string
	Name  *string
	Email *string
	Image *string
}

// Session is a valid session read from a request.
type Session struct {
	User User
	// Expires is the expiry the client sees: the stored one for database
	// sessions, now+max_age for JWT sessions (they roll on every read).
	Expires time.Time
	// Claims is the decoded token (jwt strategy only). Refresh re-encodes it,
	// so a JWT hook may change it between Read and Refresh.
	Claims map[string]any

	rowID string // database row id
}

// Strategy stores sessions. Read never writes to the response; Refresh does
// the rolling part; Create and Destroy start and end a session.
type Strategy interface {
	// Read returns the request's session, or nil when there is none. sent
	// reports whether a session cookie came with the request, so the caller
	// can clear a stale one.
	Read(ctx context.Context, r *http.Request) (s *Session, sent bool, err error)
	// Refresh re-issues the cookie and extends the session when due.
	Refresh(ctx context.Context, w http.ResponseWriter, r *http.Request, s *Session) error
	// Create starts a session for u (claims: the JWT payload; ignored by the database strategy).
	Create(ctx context.Context, w http.ResponseWriter, r *http.Request, u User, claims map[string]any) error
	// Destroy ends the request's session, if any, and clears every cookie chunk.
	Destroy(ctx context.Context, w http.ResponseWriter, r *http.Request) error
	// Clear removes the session cookie(s) without touching storage.
	Clear(w http.ResponseWriter, r *http.Request)
	// Name is "database" or "jwt".
	Name() string
}

// Lifetime is the configured session timing and clock.
type Lifetime struct {
	MaxAge    time.Duration
	UpdateAge time.Duration
	Now       func() time.Time
}
