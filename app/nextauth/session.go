package nextauth

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// emptySession is v4's body when there is no session.
var emptySession = []byte("{}")

// sessionUnavailable is the 503's body when the database does not answer:
// an object the client's res.json() reads, with latchkey's TryLater code.
var sessionUnavailable = []byte(`{"error":"TryLater"}`)

// getSession returns the client-safe session object, or {} — the hottest
// route: one indexed lookup or one decryption, no write unless a database
// session is due for extension.
func (h *Handler) getSession(c echo.Context, rq *web.Request) error {
	web.NoStore(c)
	return h.answerSession(c, signin.JWTInput{}, signin.SessionInput{})
}

// postSession is useSession().update(data): after the route's CSRF check, as GET with
// the data handed to the JWT and Session hooks.
func (h *Handler) postSession(c echo.Context, rq *web.Request) error {
	return h.answerSession(c, signin.JWTInput{Trigger: "update", Update: rq.Data}, signin.SessionInput{Trigger: "update", Update: rq.Data})
}

// signedIn is the request's session as GET /session and forward-auth see
// it: read by the strategy and, with jwt sessions, passed through the JWT
// hook. It writes nothing. s is nil when there is none; stale then reports
// a session cookie that named none (or a session the hook ended), for a
// caller that clears it.
func (h *Handler) signedIn(ctx context.Context, r *http.Request, jin signin.JWTInput) (s *session.Session, stale bool, err error) {
	s, sent, err := h.sessions.Read(ctx, r)
	if err != nil || s == nil {
		return nil, sent && err == nil, err
	}
	if s.Claims != nil {
		s.Claims = h.hooks.JWT(s.Claims, jin)
		if s.Claims == nil { // a JWT hook returning nil ends the session, as in Auth.js
			return nil, true, nil
		}
		s.User = userFromClaims(s.Claims, s.User)
	}
	return s, false, nil
}

// SignedIn is the read half of GET /session, writing nothing: what
// forward-auth asks (forwardauth.Sessions, handed over by the wiring).
func (h *Handler) SignedIn(ctx context.Context, r *http.Request) (*session.Session, error) {
	s, _, err := h.signedIn(ctx, r, signin.JWTInput{})
	return s, err
}

// SignedInWithGroups is SignedIn for forward-auth (forwardauth.Sessions):
// a database session read from the database comes with its user's stored
// groups, read in the same statement (session.Database.ReadWithGroups),
// which forward-auth would otherwise ask for in a query of its own.
func (h *Handler) SignedInWithGroups(ctx context.Context, r *http.Request) (*session.Session, session.StoredGroups, error) {
	if d, ok := h.sessions.(groupsReading); ok {
		return d.ReadWithGroups(ctx, r)
	}
	s, err := h.SignedIn(ctx, r)
	return s, session.StoredGroups{}, err
}

// groupsReading is the database strategy (session.Database).
type groupsReading interface {
	ReadWithGroups(ctx context.Context, r *http.Request) (*session.Session, session.StoredGroups, error)
}

func (h *Handler) answerSession(c echo.Context, jin signin.JWTInput, sin signin.SessionInput) error {
	ctx, w, r := c.Request().Context(), c.Response(), c.Request()
	s, stale, err := h.signedIn(ctx, r, jin)
	if err != nil {
		// A database that does not answer is not a sign-out: {} would make
		// the client drop the session, so the answer is a 503 with
		// Retry-After and the cookie is kept. (A session this instance read
		// lately answered from its cache already: session.outage_grace.)
		if ctx.Err() != nil { // the client went away: no one to answer
			return nil
		}
		h.log.Warn("session lookup failed", "err", err, "request_id", web.RequestID(c))
		web.SetRetryAfter(c)
		return web.SendJSON(c, http.StatusServiceUnavailable, sessionUnavailable)
	}
	if s == nil {
		if stale {
			h.sessions.Clear(w, r)
		}
		return web.SendJSON(c, http.StatusOK, emptySession)
	}
	sin.UserID, sin.Token = s.User.ID, s.Claims
	obj := signin.SessionObject{
		User:    signin.SessionUser{Name: s.User.Name, Email: s.User.Email, Image: s.User.Image},
		Expires: s.Expires.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if h.tokenErrors != nil {
		// Only with a provider that keeps tokens: one indexed read. A
		// failure leaves the field out rather than failing the session.
		if obj.Error, err = h.tokenErrors.SessionError(ctx, s.User.ID); err != nil {
			logs.RequestFailed(h.log, slog.LevelWarn, err, "session: provider token mark unreadable", "err", err, "request_id", web.RequestID(c))
		}
	}
	obj = h.hooks.Session(obj, sin)
	if err := h.sessions.Refresh(ctx, w, r, s); err != nil {
		logs.RequestFailed(h.log, slog.LevelWarn, err, "session refresh failed", "err", err)
	}
	if !web.PlainJSON(c) {
		return c.JSON(http.StatusOK, obj)
	}
	return h.kit.SendBuilt(c, func(b []byte) []byte { return appendSession(b, obj) })
}

// userFromClaims reads next-auth's token fields after a JWT hook ran. A
// field the hook left alone keeps read's pointer, which saves GET /session
// an allocation per field.
func userFromClaims(c map[string]any, read session.User) session.User {
	str := func(k string, prev *string) *string {
		v, ok := c[k].(string)
		switch {
		case !ok:
			return nil
		case prev != nil && *prev == v:
			return prev
		}
		p := v // declared here so only a changed field allocates
		return &p
	}
	u := session.User{Name: str("name", read.Name), Email: str("email", read.Email), Image: str("picture", read.Image)}
	u.ID, _ = c["sub"].(string)
	u.EmailVerified = session.EmailVerified(c)
	return u
}
