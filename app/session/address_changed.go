package session

import (
	"context"
	"fmt"
	"maps"
	"net/http"
)

// AddressHolder is a strategy whose sessions carry the user's address in
// the token itself (the jwt strategy), so that a change of the address
// reaches them only through AddressChanged. The database strategy reads
// the user with the session's row and is not one.
type AddressHolder interface {
	AddressChanged(ctx context.Context, w http.ResponseWriter, r *http.Request, userID, addr string) (int64, error)
}

// AddressChanged follows the change of userID's address to addr, verified
// by the link that made it. The request's own session, when it is the
// user's, gets a token naming addr, its sign-in, sid and methods as they
// were; every other sign-in of the user ends, and the count is returned.
// A token keeps the address it was minted with, and forward-auth and its
// access rules read it from there: without this, a session elsewhere
// named the old, verified address — which another user may hold by then —
// until it signed in again.
func (j *JWT) AddressChanged(ctx context.Context, w http.ResponseWriter, r *http.Request, userID, addr string) (int64, error) {
	if j.records == nil {
		return 0, ErrNoRecords
	}
	var own *Session
	if s, _, err := j.Read(ctx, r); err == nil && s != nil && s.User.ID == userID {
		own = s
	}
	keep := ""
	if own != nil {
		keep = claimString(own.Claims, SIDClaim)
	}
	n, err := j.records.EndOtherSignIns(ctx, userID, keep, j.life.Now())
	if err != nil {
		return 0, fmt.Errorf("end the sign-ins naming the old address: %w", err)
	}
	if own == nil {
		return n, nil
	}
	claims := maps.Clone(own.Claims)
	claims["email"], claims[VerifiedEmailClaim] = addr, addr
	markAssumed(claims, own)
	if err := j.write(w, r, claims, own.SignedIn, own.Expires); err != nil {
		return n, err
	}
	return n, nil
}

// AddressChanged follows a change of userID's address to addr in the
// request's strategy (AddressHolder); nothing for one that reads the user
// with each session.
func (b Browser) AddressChanged(ctx context.Context, userID, addr string) (int64, error) {
	h, ok := b.Sessions.(AddressHolder)
	if !ok {
		return 0, nil
	}
	return h.AddressChanged(ctx, b.W, b.R, userID, addr)
}
