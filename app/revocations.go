package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/accountstore"
)

// Session revocations (`latchkey sessions revoke`, `latchkey users
// delete`) are rows in the database; a JWT session never reaches the
// database, so each instance keeps a copy (session.Revocations) that both
// strategies consult, read at start and then every session.revocation_poll:
// a revoked session ends on every instance within that time, without a
// query on GET /session.

// revocationPoll is session.revocation_poll, 1 s when unset.
func (a *App) revocationPoll() time.Duration {
	if p := a.cfg.Session.RevocationPoll.D(); p > 0 {
		return p
	}
	return time.Second
}

// revocationsFullRead is how long the poll trusts the digests alone
// before it reads the rows anyway (session.Revocations.Current).
const revocationsFullRead = time.Minute

// loadRevocations reads the tables into the copy when their digests
// changed since the last read, or that read is older than
// revocationsFullRead, or force: two aggregate queries on an unchanged
// poll, where reading every row each second grew with the tables.
func (a *App) loadRevocations(ctx context.Context, force bool) error {
	now := a.now()
	signIns := accountstore.New(a.store)
	revs, err := a.store.RevocationsDigest(ctx)
	if err != nil {
		return err
	}
	ends, err := signIns.EndedSignInsDigest(ctx, now)
	if err != nil {
		return err
	}
	d := session.Digest{Revocations: revs.Rows, SumNotBefore: revs.SumNotBefore, Ended: ends.Rows, LastEnded: ends.Last}
	if !force && a.revocations.Current(d, now, revocationsFullRead) {
		return nil
	}
	rows, err := a.store.Revocations(ctx)
	if err != nil {
		return err
	}
	ended, err := signIns.EndedSignIns(ctx, now)
	if err != nil {
		return err
	}
	if a.revocations.Set(rows, ended) {
		a.log.Debug("session revocations loaded", "rows", len(rows), "ended_sign_ins", len(ended))
	}
	a.revocations.MarkRead(d, now)
	return nil
}

// revocationLoop polls the table until ctx ends. A failed read keeps the
// last copy (the revocations it holds still apply: a poll that fails never
// forgets one) and is logged once per outage, not every poll; the poll
// goes on by itself once the database answers again, which is logged too.
func (a *App) revocationLoop(ctx context.Context) {
	t := time.NewTicker(a.revocationPoll())
	defer t.Stop()
	down := outage{log: a.log, task: "session revocation poll", meanwhile: "the revocations read last still apply, newer ones wait for the database"}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		read, cancel := context.WithTimeout(ctx, max(a.revocationPoll(), 5*time.Second))
		err := a.loadRevocations(read, false)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			down.failed(err)
		default:
			down.worked()
		}
	}
}

// purgeRevocations is the purge (purger) of the revocations that nothing
// they ended can outlive: older than the longest a session lives after its
// sign-in (with absolute_max_age) or after its last extension (max_age)
// and, with the OpenID Provider, than its refresh and access tokens live
// (a refresh token left unused across the revocation is refused by it
// alone: purged with the sessions' window, the token worked again) and,
// with a password provider, than its device cookies live (signin.KnownFor:
// the revocation voids those signed in before it; purged sooner, a revoked
// one exempted again), plus a day for instances that were late to read
// them.
func purgeRevocations(cfg config.Config, store *models.Store, now func() time.Time) func(context.Context) (int64, error) {
	keep := max(cfg.Session.MaxAge.D(), cfg.Session.AbsoluteMaxAge.D())
	if cfg.OpenID.Enabled {
		keep = max(keep, cfg.OpenID.RefreshTokenLifetime.D(), cfg.OpenID.AccessTokenLifetime.D())
	}
	if _, ok := cfg.Credentials(); ok {
		keep = max(keep, signin.KnownFor)
	}
	keep += 24 * time.Hour
	return func(ctx context.Context) (int64, error) {
		return store.PurgeRevocations(ctx, now().Add(-keep))
	}
}

// sessionsEnded waits, after every session of a user signed in up to at
// was revoked, until the second after at has begun: a session remembers
// its sign-in in whole seconds and the revocation ends the whole second
// (models.RevokeSessions), so a sign-in that follows at once would
// otherwise be ended too. It first reloads this instance's copy of the
// revocations, so they apply here at once; other instances follow within
// session.revocation_poll.
func (a *App) sessionsEnded(ctx context.Context, at time.Time) {
	if err := a.loadRevocations(ctx, true); err != nil {
		logs.RequestFailed(a.log, slog.LevelWarn, err, "session revocations not reloaded; the poll will", "err", err)
	}
	wait := at.Truncate(time.Second).Add(time.Second).Sub(at)
	if at.Equal(at.Truncate(time.Second)) {
		return
	}
	select {
	case <-time.After(min(wait, time.Second)):
	case <-ctx.Done():
	}
}
