package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/latchkey-auth/latchkey/models/accountstore"
)

// Record is one live session of a user as the account page lists it.
type Record struct {
	// ID names the session publicly: the row's id (database) or the
	// token's sid (jwt); never the token or its hash.
	ID              string
	SignedIn        time.Time
	LastSeen        time.Time
	Device, Network string
	// Current: the session of the request that asked.
	Current bool
}

// Recorder lists and ends a user's sessions one by one. Both strategies
// implement it: the database strategy from its rows, the jwt strategy from
// its sign-in records (a JWT ended here is refused on every instance once
// the revocation poll has read it).
type Recorder interface {
	Records(ctx context.Context, r *http.Request, userID string) ([]Record, error)
	// EndRecord ends the user's session id; false when the user has no
	// such live session (another user's id is none).
	EndRecord(ctx context.Context, r *http.Request, userID, id string) (bool, error)
	// EndOtherRecords ends every session of the user but the request's.
	EndOtherRecords(ctx context.Context, r *http.Request, userID string) (int64, error)
}

// ErrNoRecords: the strategy keeps no records (WithRecords was not called).
var ErrNoRecords = errors.New("sessions are not recorded")

// SessionRecords are the database sessions' rows as the account page
// reads and ends them (models/accountstore).
type SessionRecords interface {
	SessionsOfUser(ctx context.Context, userID string, now time.Time) ([]accountstore.SessionRecord, error)
	DeleteUserSession(ctx context.Context, userID, id string) (bool, error)
	DeleteOtherSessions(ctx context.Context, userID, keepTokenHash string) (int64, error)
}

// Records implements Recorder.
func (d *Database) Records(ctx context.Context, r *http.Request, userID string) ([]Record, error) {
	if d.records == nil {
		return nil, ErrNoRecords
	}
	now := d.life.Now()
	rows, err := d.records.SessionsOfUser(ctx, userID, now)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	current := ""
	if tok, _ := d.token(r); tok != "" && len(tok) <= maxDBTokenLen {
		current = HashToken(tok)
	}
	out := make([]Record, 0, len(rows))
	for _, row := range rows {
		if d.life.over(row.CreatedAt, now) {
			continue
		}
		seen := row.CreatedAt
		if row.LastSeen != nil {
			seen = *row.LastSeen
		}
		out = append(out, Record{ID: row.ID, SignedIn: row.CreatedAt, LastSeen: seen, Device: row.Device, Network: row.Network,
			Current: current != "" && row.TokenHash == current})
	}
	return out, nil
}

// EndRecord implements Recorder.
func (d *Database) EndRecord(ctx context.Context, _ *http.Request, userID, id string) (bool, error) {
	if d.records == nil {
		return false, ErrNoRecords
	}
	defer d.cache.invalidate() // after the delete: see lookupCache.gen
	ok, err := d.records.DeleteUserSession(ctx, userID, id)
	if err != nil {
		return false, fmt.Errorf("end a session: %w", err)
	}
	return ok, nil
}

// EndOtherRecords implements Recorder.
func (d *Database) EndOtherRecords(ctx context.Context, r *http.Request, userID string) (int64, error) {
	if d.records == nil {
		return 0, ErrNoRecords
	}
	keep := ""
	if tok, _ := d.token(r); tok != "" && len(tok) <= maxDBTokenLen {
		keep = HashToken(tok)
	}
	defer d.cache.invalidate()
	n, err := d.records.DeleteOtherSessions(ctx, userID, keep)
	if err != nil {
		return 0, fmt.Errorf("end the other sessions: %w", err)
	}
	return n, nil
}

// Records implements Recorder: the user's sign-ins not ended, within
// their lifetime and seen within max_age.
func (j *JWT) Records(ctx context.Context, r *http.Request, userID string) ([]Record, error) {
	if j.records == nil {
		return nil, ErrNoRecords
	}
	now := j.life.Now()
	rows, err := j.records.SignInsOfUser(ctx, userID, now)
	if err != nil {
		return nil, fmt.Errorf("list sign-ins: %w", err)
	}
	current := j.currentSID(ctx, r)
	out := make([]Record, 0, len(rows))
	for _, row := range rows {
		if j.life.over(row.CreatedAt, now) || !j.life.live(row.LastSeen, now) {
			continue
		}
		out = append(out, Record{ID: row.ID, SignedIn: row.CreatedAt, LastSeen: row.LastSeen, Device: row.Device, Network: row.Network,
			Current: current != "" && row.ID == current})
	}
	return out, nil
}

// EndRecord implements Recorder.
func (j *JWT) EndRecord(ctx context.Context, _ *http.Request, userID, id string) (bool, error) {
	if j.records == nil {
		return false, ErrNoRecords
	}
	ok, err := j.records.EndSignIn(ctx, userID, id, j.life.Now())
	if err != nil {
		return false, fmt.Errorf("end a sign-in: %w", err)
	}
	return ok, nil
}

// EndOtherRecords implements Recorder.
func (j *JWT) EndOtherRecords(ctx context.Context, r *http.Request, userID string) (int64, error) {
	if j.records == nil {
		return 0, ErrNoRecords
	}
	n, err := j.records.EndOtherSignIns(ctx, userID, j.currentSID(ctx, r), j.life.Now())
	if err != nil {
		return 0, fmt.Errorf("end the other sign-ins: %w", err)
	}
	return n, nil
}

// currentSID is the sid of the request's valid token ("" when none).
func (j *JWT) currentSID(ctx context.Context, r *http.Request) string {
	s, _, err := j.Read(ctx, r)
	if err != nil || s == nil {
		return ""
	}
	return claimString(s.Claims, SIDClaim)
}
