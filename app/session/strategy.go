// Package session keeps signed-in state in the database (an opaque token in
// the cookie, its hash in the sessions table) or in the cookie itself (an
// encrypted JWT). Both implement Strategy and pass one conformance suite.
package session

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// User is the identity a session carries.
type User struct {
	ID    string
	Name  *string
	Email *string
	Image *string
	// EmailVerified says Email was proved (an e-mail link, a password
	// sign-up or reset, a provider that verifies addresses): the user's
	// emailVerified (database), or the token's VerifiedEmailClaim naming
	// Email (jwt). Forward-auth's access rules and Remote-Email trust
	// nothing else.
	EmailVerified bool
	// Methods are how the user signed in, given to Create (amr values,
	// app/twofactor's Method*); a read Session has them in Methods().
	Methods []string
	// Provider is the provider the user signed in with, given to Create
	// for the session.created webhook event; never read back.
	Provider string
}

// Session is a valid session read from a request.
type Session struct {
	User User
	// Expires is the expiry the client sees: the stored one for database
	// sessions; for JWT sessions the token's exp, or now+max_age when this
	// response re-issues the token (see JWT.plan); never past SignedIn +
	// the absolute max age.
	Expires time.Time
	// SignedIn is when the user signed in: the row's created_at (database)
	// or the token's auth_time claim (jwt). Rolling never moves it.
	SignedIn time.Time
	// assumed: SignedIn is no sign-in time of the token's own but its iat
	// (jwt: a token next-auth's encode minted, see signInTime), or one
	// latchkey stamped from that iat (AssumedSignInClaim). Good enough to
	// bound the absolute lifetime; no proof of a recent sign-in (Proven).
	assumed bool
	// Claims is the decoded token (jwt strategy only). A JWT hook may change
	// it between Read and Refresh, which then re-encodes it.
	Claims map[string]any

	// payload is the JSON the jwt strategy decoded Claims from; Refresh
	// re-issues the token when the claims no longer serialize to it.
	payload string
	// reissue: the jwt strategy re-issues the token whatever the hooks do
	// (Read decided why; Expires is then the new token's expiry).
	reissue bool
	// shared: Claims belong to the jwt strategy's decode cache, and every
	// request with the same token reads them: copy before editing.
	shared bool
	// amr is the database row's methods, space-separated (Methods()).
	amr string
	// userFields hold the strings User's name, email and image point to
	// (both strategies): allocated with the Session instead of one by one, since GET
	// /session reads a session on every page load.
	userFields [3]string
}

// Proven is when the user last proved who they are, for the changes that
// want a recent sign-in (step-up): SignedIn, or the zero time, which no
// "signed in within minutes" check passes, for a token without a sign-in
// time of its own. next-auth's encode sets iat to now on every re-encode,
// so a stolen old token that a next-auth app refreshed (a shared secret
// during a migration) would otherwise look signed in a moment ago.
func (s *Session) Proven() time.Time {
	if s.assumed {
		return time.Time{}
	}
	return s.SignedIn
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
	// Create starts a session for u, signed in now (claims: the JWT payload,
	// to which the jwt strategy adds auth_time; ignored by the database strategy).
	Create(ctx context.Context, w http.ResponseWriter, r *http.Request, u User, claims map[string]any) error
	// Destroy ends the request's session, if any, and clears every cookie chunk.
	Destroy(ctx context.Context, w http.ResponseWriter, r *http.Request) error
	// Clear removes the session cookie(s) without touching storage.
	Clear(w http.ResponseWriter, r *http.Request)
	// Name is "database" or "jwt".
	Name() string
	// Recorder lists and ends the user's sessions one by one (records.go).
	Recorder
}

// ProfileCache is a strategy that keeps users' profiles between reads (the
// database strategy's lookup cache, session.cache_ttl). UsersChanged tells
// it that a user's profile changed on this instance, so no copy read
// before is served. The jwt strategy keeps the profile in the token
// itself, minted at sign-in, and is not one.
type ProfileCache interface {
	UsersChanged()
}

// Lifetime is the configured session timing and clock.
type Lifetime struct {
	MaxAge    time.Duration
	UpdateAge time.Duration
	// AbsoluteMaxAge ends a session this long after its sign-in, however
	// active it stays; 0 means no such limit.
	AbsoluteMaxAge time.Duration
	Now            func() time.Time
}

// over reports whether a session signed in at signedIn has reached its
// absolute end at now.
func (l Lifetime) over(signedIn, now time.Time) bool {
	return l.AbsoluteMaxAge > 0 && !signedIn.Add(l.AbsoluteMaxAge).After(now)
}

// capped is t, or the absolute end of a session signed in at signedIn when
// that comes first: no expiry a strategy stores, reports or puts in a
// cookie or token reaches past it.
func (l Lifetime) capped(signedIn, t time.Time) time.Time {
	if l.AbsoluteMaxAge > 0 {
		if end := signedIn.Add(l.AbsoluteMaxAge); end.Before(t) {
			return end
		}
	}
	return t
}

// Methods are how the session's user signed in (amr values): the row's
// (database) or the token's AMRClaim (jwt); nil when unknown (a session
// started before latchkey recorded them). Only forward-auth and the second
// step ask, so GET /session never splits or copies them.
func (s *Session) Methods() []string {
	if s.Claims == nil {
		return strings.Fields(s.amr)
	}
	switch list := s.Claims[AMRClaim].(type) {
	case []string: // claims Create stamped in this process, not yet decoded
		return list
	case []any: // a decoded token
		out := make([]string, 0, len(list))
		for _, v := range list {
			if m, ok := v.(string); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// recordEnd is when a session signed in at signedIn has surely ended, for
// purging its record: its absolute end; without absolute_max_age a session
// may roll on indefinitely, and its record is kept until it is ended or
// its user deleted (noEnd).
func (l Lifetime) recordEnd(signedIn time.Time) time.Time {
	if l.AbsoluteMaxAge > 0 {
		return signedIn.Add(l.AbsoluteMaxAge)
	}
	return signedIn.Add(noEnd)
}

// noEnd stands for "no end" in a timestamp column.
const noEnd = 10 * 365 * 24 * time.Hour

// live reports whether a session last seen (issued or extended) at seen
// can still be alive at now: within max_age of it.
func (l Lifetime) live(seen, now time.Time) bool { return seen.Add(l.MaxAge).After(now) }
