package accountcentre

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/web"
)

// sessionJSON is one session in GET {base}/list-sessions.
type sessionJSON struct {
	ID         string    `json:"id"`
	Current    bool      `json:"current"`
	CreatedAt  time.Time `json:"createdAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	Device     string    `json:"device"`
	Network    string    `json:"network"`
}

func sessionsJSON(list []session.Record) []sessionJSON {
	out := make([]sessionJSON, 0, len(list))
	for _, r := range list {
		out = append(out, sessionJSON{ID: r.ID, Current: r.Current, CreatedAt: r.SignedIn.UTC(), LastSeenAt: r.LastSeen.UTC(),
			Device: r.Device, Network: r.Network})
	}
	return out
}

// getSessions is GET {base}/list-sessions: the user's live sessions.
func (h *Handler) getSessions(c echo.Context, _ *web.Request, u user) error {
	list, err := h.rules.ListSessions(c.Request().Context(), h.browser(c), u.ID)
	if err != nil {
		return err
	}
	web.NoStore(c)
	return c.JSON(http.StatusOK, sessionsJSON(list))
}

// postRevokeSession is POST {base}/revoke-session (id): ends one session
// of the user, on every instance. Another user's id is NotFound.
func (h *Handler) postRevokeSession(c echo.Context, rq *web.Request, u user) error {
	if err := h.rules.EndSession(c.Request().Context(), h.browser(c), u.ID, rq.Form.Get("id")); err != nil {
		return h.refuse(c, rq, "ending a session", err)
	}
	return h.done(c, rq, nil, "SessionEnded")
}

// postRevokeOthers is POST {base}/revoke-other-sessions.
func (h *Handler) postRevokeOthers(c echo.Context, rq *web.Request, u user) error {
	n, err := h.rules.EndOtherSessions(c.Request().Context(), h.browser(c), u.ID)
	if err != nil {
		return h.refuse(c, rq, "ending the other sessions", err)
	}
	return h.done(c, rq, map[string]any{"revoked": n}, "OtherSessionsEnded", "count", strconv.FormatInt(n, 10))
}
