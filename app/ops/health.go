// Package ops answers the operator, not the browser: health checks for
// load balancers and orchestrators, the metrics listener, the OpenAPI
// document, the theme stylesheet and the static files.
package ops

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

// The health checks answer at the root of the listener, outside the base
// path, for load balancers and orchestrators: no cookies, no CSRF work,
// GET and HEAD alike.
//
//   - GET /health/live: 200 {"status":"ok"} while the process serves.
//   - GET /health/ready: 200 {"status":"ok"} when the database passed its
//     check (the store's Ready) within readyTimeout, else 503
//     {"status":"unavailable","reason":"database"}.

const (
	// readyTimeout bounds one database check: a stuck database answers
	// "unavailable" quickly instead of holding the probe.
	readyTimeout = 2 * time.Second
	// readyReuse is how long one check's result answers every probe: the
	// endpoint is public, and a flood of probes must not become a flood
	// of database statements.
	readyReuse = time.Second
)

var (
	healthOK          = []byte(`{"status":"ok"}` + "\n")
	healthUnavailable = []byte(`{"status":"unavailable","reason":"database"}` + "\n")
	healthNoStore     = web.HeaderValue("no-store")
)

func (h *Handler) getLive(c echo.Context) error { return sendHealth(c, http.StatusOK, healthOK) }

func (h *Handler) getReady(c echo.Context) error {
	if h.readiness.check(h.db, h.log) != nil {
		return sendHealth(c, http.StatusServiceUnavailable, healthUnavailable)
	}
	return sendHealth(c, http.StatusOK, healthOK)
}

func sendHealth(c echo.Context, status int, body []byte) error {
	c.Response().Header()["Cache-Control"] = healthNoStore
	return web.SendJSON(c, status, body)
}

// readiness is the last database check, shared by the probes of the next
// readyReuse; one check runs at a time, and probes arriving meanwhile wait
// for its result.
type readiness struct {
	mu      sync.Mutex
	checked time.Time
	err     error
}

// check returns the database's state, checking it again when the last
// result is older than readyReuse. A change of state is logged once: the
// cause when the database stops answering, a line when it is back.
func (r *readiness) check(db Database, log *slog.Logger) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.checked.IsZero() && time.Since(r.checked) < readyReuse {
		return r.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	err := db.Ready(ctx)
	switch {
	case err != nil && r.err == nil:
		log.Warn("not ready: the database check failed", "err", err)
	case err == nil && r.err != nil:
		log.Info("ready again: the database answers")
	}
	r.checked, r.err = time.Now(), err
	return err
}
