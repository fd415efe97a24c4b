package session

import (
	"context"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"net/http"
	"time"
)

// Browser is one request as the sign-in core sees it (signin.Browser): the
// session it holds, and the response a new session's cookie goes to.
type Browser struct {
	Sessions Strategy
	W        http.ResponseWriter
	R        *http.Request
	// Created is told of every session started (the metrics); nil: nobody.
	Created func()
}

// SignedInUser is the id of the request's signed-in user, "" for none.
func (b Browser) SignedInUser(ctx context.Context) (string, error) {
	s, _, err := b.Sessions.Read(ctx, b.R)
	if err != nil || s == nil {
		return "", err
	}
	return s.User.ID, nil
}

// SignedInSince is SignedInUser with the time of its sign-in as the
// recent-sign-in checks read it (Session.Proven: zero for a token without
// a sign-in time of its own).
func (b Browser) SignedInSince(ctx context.Context) (string, time.Time, error) {
	s, _, err := b.Sessions.Read(ctx, b.R)
	if err != nil || s == nil {
		return "", time.Time{}, err
	}
	return s.User.ID, s.Proven(), nil
}

// SignedInMethods is SignedInUser with how that session signed in.
func (b Browser) SignedInMethods(ctx context.Context) (string, []string, error) {
	s, _, err := b.Sessions.Read(ctx, b.R)
	if err != nil || s == nil {
		return "", nil, err
	}
	return s.User.ID, s.Methods(), nil
}

// Records are the live sessions of the user (the request's marked).
func (b Browser) Records(ctx context.Context, userID string) ([]Record, error) {
	return b.Sessions.Records(ctx, b.R, userID)
}

// EndRecord ends the user's session id.
func (b Browser) EndRecord(ctx context.Context, userID, id string) (bool, error) {
	return b.Sessions.EndRecord(ctx, b.R, userID, id)
}

// EndOtherRecords ends every session of the user but the request's.
func (b Browser) EndOtherRecords(ctx context.Context, userID string) (int64, error) {
	return b.Sessions.EndOtherRecords(ctx, b.R, userID)
}

// Cookie is the value of the request's cookie name, "" when absent.
func (b Browser) Cookie(name string) string {
	v, _ := cookies.Read(b.R, name)
	return v
}

// StartSession starts a session for u and sets its cookie.
func (b Browser) StartSession(ctx context.Context, u User, claims map[string]any) error {
	if err := b.Sessions.Create(ctx, b.W, b.R, u, claims); err != nil {
		return err
	}
	if b.Created != nil {
		b.Created()
	}
	return nil
}

// EndSession ends the request's session and clears its cookie.
func (b Browser) EndSession(ctx context.Context) error {
	return b.Sessions.Destroy(ctx, b.W, b.R)
}
