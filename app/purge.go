package app

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// purgeRetry is how soon a purge that failed (the database was down or
// failing over) is tried again, when the purge interval is longer: an
// hourly purge that met an outage does not wait an hour more.
const purgeRetry = time.Minute

// purger deletes what has expired, at Serve's start and then every
// `every` (hourly), on every instance (each purge is safe to run at once
// on several): expired sessions, links and counters and the rate-limit
// buckets that are full again (models.PurgeExpired), revocations no
// session can outlive, and the feature stores' expired rows.
type purger struct {
	every time.Duration
	log   *slog.Logger
	// tasks are the purges, each of its own transaction, so one that
	// fails does not keep the others from running.
	tasks []func(context.Context) (int64, error)
}

// run purges until ctx ends. A failed purge keeps nothing from working
// (expired rows are refused whether or not they are deleted); it is
// logged once per outage and tried again after purgeRetry.
func (p *purger) run(ctx context.Context) {
	down := outage{log: p.log, task: "purge expired rows", meanwhile: "expired rows stay in the database (they are refused all the same) until it runs again"}
	for {
		err := p.once(ctx)
		next := p.every
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			down.failed(err)
			next = min(next, purgeRetry)
		default:
			down.worked()
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// once runs every task and returns their errors together.
func (p *purger) once(ctx context.Context) error {
	var (
		rows int64
		errs []error
	)
	for _, task := range p.tasks {
		n, err := task(ctx)
		rows += n
		errs = append(errs, err)
	}
	if rows > 0 {
		p.log.Info("purged expired rows", "rows", rows)
	}
	return errors.Join(errs...)
}
