package session

import (
	"sync/atomic"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// Revocations is this instance's copy of the session_revocations table
// (`latchkey sessions revoke`, `latchkey users delete`): per-user "not
// before" times and one for every user. A JWT session lives in its cookie,
// so it can only be recalled by refusing it here; the app polls the table
// into it (Set) and both strategies ask Revoked on every read, which is an
// atomic load and a map lookup: no lock, no allocation, no query.
type Revocations struct {
	set  atomic.Pointer[revocationSet]
	read atomic.Pointer[readMark]
}

// Digest is what the poll reads before the rows: the tables' summaries
// (models.RevocationDigest, accountstore.EndedDigest). Equal digests
// mean the same rows, so the poll reads the rows only when it changed:
// at a million users, with 10⁴ revocations and 10⁴ ended sign-ins,
// reading them every second cost an idle instance 5.6 % of a core
// (issue #36).
type Digest struct {
	Revocations, Ended int64
	SumNotBefore       int64
	LastEnded          string
}

// readMark is the digest the copy was last read at, and when.
type readMark struct {
	digest Digest
	at     time.Time
}

// Current reports whether the copy was read at digest d less than maxAge
// before now: the poll need not read the rows. maxAge bounds how long a
// change the digest cannot tell (an ended sign-in whose ended_at is older
// than the latest, written by an instance whose clock is behind, while
// another ended one expires) goes unseen.
func (r *Revocations) Current(d Digest, now time.Time, maxAge time.Duration) bool {
	m := r.read.Load()
	return m != nil && m.digest == d && now.Sub(m.at) < maxAge
}

// MarkRead records that the copy was read at digest d at now.
func (r *Revocations) MarkRead(d Digest, now time.Time) {
	r.read.Store(&readMark{digest: d, at: now})
}

// revocationSet is one poll's table; it is replaced whole, never changed.
type revocationSet struct {
	all   int64            // every session signed in before it (Unix seconds) is revoked
	users map[string]int64 // user id → not before (Unix seconds)
	rows  int
	// ended are the sign-ins (JWT sid claims) ended one by one from the
	// account page; empty: none.
	ended map[string]struct{}
}

// Revoked reports whether a session of userID signed in at signedIn has
// been revoked. A nil Revocations revokes nothing.
func (r *Revocations) Revoked(userID string, signedIn time.Time) bool {
	if r == nil {
		return false
	}
	s := r.set.Load()
	if s == nil {
		return false
	}
	sec := signedIn.Unix()
	if sec < s.all {
		return true
	}
	nb, ok := s.users[userID]
	return ok && sec < nb
}

// Ended reports whether the sign-in sid (a JWT's sid claim) was ended on
// its own (the account page's "end this session").
func (r *Revocations) Ended(sid string) bool {
	if r == nil || sid == "" {
		return false
	}
	s := r.set.Load()
	if s == nil || len(s.ended) == 0 {
		return false
	}
	_, ok := s.ended[sid]
	return ok
}

// Set replaces the copy with rows (the whole table) and the ended
// sign-ins, and reports whether anything changed; an unchanged table
// allocates nothing.
func (r *Revocations) Set(rows []models.SessionRevocation, ended []string) bool {
	if cur := r.set.Load(); cur != nil && cur.same(rows) && cur.sameEnded(ended) {
		return false
	}
	next := &revocationSet{users: make(map[string]int64, len(rows)), rows: len(rows)}
	if len(ended) > 0 {
		next.ended = make(map[string]struct{}, len(ended))
		for _, sid := range ended {
			next.ended[sid] = struct{}{}
		}
	}
	for _, row := range rows {
		if row.UserID == models.AllUsers {
			next.all = row.NotBefore
			continue
		}
		next.users[row.UserID] = row.NotBefore
	}
	r.set.Store(next)
	return true
}

// sameEnded reports whether ended (distinct ids) is exactly this set's.
func (s *revocationSet) sameEnded(ended []string) bool {
	if len(ended) != len(s.ended) {
		return false
	}
	for _, sid := range ended {
		if _, ok := s.ended[sid]; !ok {
			return false
		}
	}
	return true
}

// same reports whether rows hold exactly this set.
func (s *revocationSet) same(rows []models.SessionRevocation) bool {
	if len(rows) != s.rows {
		return false
	}
	for _, row := range rows {
		if row.UserID == models.AllUsers {
			if row.NotBefore != s.all {
				return false
			}
			continue
		}
		if nb, ok := s.users[row.UserID]; !ok || nb != row.NotBefore {
			return false
		}
	}
	return true
}
