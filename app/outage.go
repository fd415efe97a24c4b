package app

import (
	"log/slog"
	"time"
)

// outage tells the log about a background task that runs on a timer (the
// revocation poll, the purge) and fails, typically because the database is
// down or failing over: one line when it starts failing and one when it
// works again, however often it ran meanwhile. A database down for ten
// minutes under a one-second poll is two lines, not six hundred; the
// "resumed" line says how long it lasted. Each loop keeps its own.
type outage struct {
	log  *slog.Logger
	task string // what failed, e.g. "session revocation poll"
	// meanwhile says what holds while it fails, for the operator reading
	// the first line.
	meanwhile string
	since     time.Time // when the failing began; zero: working
	failures  int       // runs that failed since then
}

// failed records a failed run; the first of an outage is logged.
func (o *outage) failed(err error) {
	o.failures++
	if !o.since.IsZero() {
		return
	}
	o.since = time.Now()
	o.log.Warn(o.task+": failing; "+o.meanwhile+"; it is retried and logged again once it works", "err", err)
}

// worked records a run that worked; the first after an outage is logged.
func (o *outage) worked() {
	if o.since.IsZero() {
		return
	}
	o.log.Info(o.task+": resumed", "after", time.Since(o.since).Round(time.Second), "failed_runs", o.failures)
	o.since, o.failures = time.Time{}, 0
}
