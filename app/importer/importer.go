// Package importer is the rules of `latchkey import next-auth` (issue #33):
// which rows of a next-auth database become latchkey's, and how, so that
// nobody is signed out by the move.
//
//   - Users keep their ids (an app's own tables reference them) and their
//     e-mail verification; e-mails are stored lower-case, as latchkey
//     stores them, so two next-auth users whose addresses differ only by
//     case cannot both come in: the first (in id order) does, the other is
//     skipped with everything of it.
//   - Accounts come in linked to their own user only: an identity already
//     linked to another latchkey user is skipped, never re-linked, and no
//     account is ever linked to a user by e-mail. Provider tokens come
//     in, sealed (Options.SealTokens), for providers with store_tokens;
//     the others' are not kept, and the summary says so.
//   - Database sessions come in under the hash of their token, with their
//     expiry, so each browser's existing session cookie is a latchkey
//     session; their sign-in time is the import's (next-auth keeps none),
//     which session.absolute_max_age counts from. A session of a user
//     whose sessions latchkey revoked since the migration began (sign out
//     everywhere, a password reset, `latchkey sessions revoke`, for them
//     or for everyone) is not brought in: with no sign-in time it may be
//     one the revocation meant to end, so the rule fails closed (see
//     revokedSince).
//   - Unexpired verification tokens come in as stored: next-auth keeps the
//     hash of the link's token with the secret, which is how latchkey
//     stores sign-in links, so a mailed link still works when latchkey has
//     the same secret.
//
// Every table is read and written in batches, one transaction each; a row
// already in latchkey is left as it is, so a second run imports only what
// is new. Every row written or found is recorded (the import ledger; not
// one the write left out because latchkey took its e-mail or identity
// meanwhile: that is skipped, and a later run tries it again):
// one that latchkey has since ended — a session signed out, a link used,
// an account unlinked, a user deleted — is not brought back by a later
// run, however long next-auth's database keeps it.
package importer

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/importstore"
)

// Source is the next-auth database (importstore.Source).
type Source interface {
	Schema() string
	Users(ctx context.Context, c importstore.Cursor, n int) ([]importstore.User, importstore.Cursor, error)
	Accounts(ctx context.Context, c importstore.Cursor, n int) ([]importstore.Account, importstore.Cursor, error)
	Sessions(ctx context.Context, c importstore.Cursor, n int) ([]importstore.Session, importstore.Cursor, error)
	VerificationTokens(ctx context.Context, c importstore.Cursor, n int) ([]importstore.VerificationToken, importstore.Cursor, error)
}

// Target is latchkey's database (importstore.Target).
type Target interface {
	ExistingUsers(ctx context.Context, ids []string) (map[string]string, error)
	UsersByEmail(ctx context.Context, emails []string) (map[string]string, error)
	AccountOwners(ctx context.Context, keys []string) (map[string]string, error)
	ExistingSessions(ctx context.Context, hashes []string) (map[string]bool, error)
	ExistingTokens(ctx context.Context, keys []string) (map[string]bool, error)
	// Ledger answers which of keys an earlier import recorded (brought in
	// or found): one of those latchkey no longer has was ended there.
	Ledger(ctx context.Context, kind string, keys []string) (map[string]bool, error)
	// FirstImport is when the ledger's earliest import ran; zero: none.
	FirstImport(ctx context.Context) (time.Time, error)
	// RevokedSince answers, of userIDs, those whose sessions a revocation
	// (theirs or everyone's) ended at or after since.
	RevokedSince(ctx context.Context, userIDs []string, since time.Time) (map[string]bool, error)
	// Write stores b and answers the ledger entries of the rows it did
	// not write (latchkey took them meanwhile).
	Write(ctx context.Context, b importstore.Batch) ([]importstore.LedgerEntry, error)
}

// Options shape a run.
type Options struct {
	// BatchSize is how many rows each read and write handles; 0: 1000.
	BatchSize int
	// DryRun reads and judges everything and writes nothing.
	DryRun bool
	// Now is the clock that decides what is expired.
	Now func() time.Time
	// Providers are the provider ids latchkey is configured with: accounts
	// of others come in (a provider may be added later) and are noted.
	Providers []string
	// KeepTokens are the providers with store_tokens: their accounts'
	// provider tokens come in, sealed by SealTokens (which is then
	// required). The other providers' tokens are dropped.
	KeepTokens []string
	// SealTokens seals an account's tokens in place
	// (providertokens.Sealer.SealAccount).
	SealTokens func(*models.Account) error
	// Progress, when set, is told after every batch.
	Progress func(table string, read int)
}

// Count is one table's tally.
type Count struct {
	Read, Imported, There, Skipped int
}

// Skip is why rows were left out: N rows of Table under Key.
type Skip struct {
	Table, Key, Reason string
	N                  int
}

// Summary is what a run did.
type Summary struct {
	Schema                            string
	Users, Accounts, Sessions, Tokens Count
	Skipped                           []Skip
	// TokensKept counts accounts whose provider tokens came in, sealed;
	// TokensDropped those whose tokens were not kept (store_tokens off).
	TokensKept, TokensDropped int
	// ImagesDropped counts imported users whose image was dropped (not an
	// http(s) URL or a path on the app's origin, or over 2 KiB).
	ImagesDropped int
	// UnknownProviders are providers of imported accounts that latchkey is
	// not configured for, with their account counts.
	UnknownProviders map[string]int
}

// userState is what became of a next-auth user.
type userState uint8

const (
	userIn      userState = iota + 1 // imported now (or would be, in a dry run)
	userThere                        // latchkey had it already
	userSkipped                      // left out, with its rows
)

// run is one import's state.
type run struct {
	src   Source
	dst   Target
	o     Options
	sum   Summary
	users map[string]userState
	// emails are the lower-case e-mails of the users taken, to their ids.
	emails map[string]string
	skips  map[[3]string]int
	order  [][3]string
	// began is when this run started, by the wall clock that stamps
	// revocations and the ledger (not Options.Now, the expiry clock).
	began time.Time
}

// Run imports src into dst.
func Run(ctx context.Context, src Source, dst Target, o Options) (Summary, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if len(o.KeepTokens) > 0 && o.SealTokens == nil {
		return Summary{}, errors.New("import: KeepTokens without SealTokens")
	}
	r := &run{src: src, dst: dst, o: o, users: map[string]userState{}, emails: map[string]string{}, skips: map[[3]string]int{}, began: time.Now()}
	r.sum.Schema = src.Schema()
	r.sum.UnknownProviders = map[string]int{}
	for _, step := range []func(context.Context) error{r.importUsers, r.importAccounts, r.importSessions, r.importTokens} {
		if err := step(ctx); err != nil {
			return r.summary(), err
		}
	}
	return r.summary(), nil
}

func (r *run) summary() Summary {
	s := r.sum
	s.Skipped = nil
	for _, k := range r.order {
		s.Skipped = append(s.Skipped, Skip{Table: k[0], Key: k[1], Reason: k[2], N: r.skips[k]})
	}
	return s
}

// skip records n rows of table under key left out for reason.
func (r *run) skip(c *Count, table, key, reason string) {
	c.Skipped++
	k := [3]string{table, key, reason}
	if _, ok := r.skips[k]; !ok {
		r.order = append(r.order, k)
	}
	r.skips[k]++
}

// taken is the reason of a row the write left out.
const taken = "latchkey took its e-mail or identity while the import ran (a sign-up or sign-in meanwhile)"

// write stores b unless this is a dry run. A row the write left out
// (latchkey took its e-mail or identity between the lookups and the
// write) counts as skipped, not imported; a user so left out takes its
// rows with it.
func (r *run) write(ctx context.Context, c *Count, b importstore.Batch) error {
	if r.o.DryRun {
		return nil
	}
	missed, err := r.dst.Write(ctx, b)
	if err != nil {
		return err
	}
	for _, e := range missed {
		c.Imported--
		key := ""
		switch e.Kind {
		case "users":
			r.users[e.Key] = userSkipped
			key = shown(e.Key)
		case "accounts":
			key = shown(strings.Replace(e.Key, importstore.KeySep, "/", 1))
		}
		r.skip(c, e.Kind, key, taken)
	}
	return nil
}

func (r *run) progress(table string, read int) {
	if r.o.Progress != nil {
		r.o.Progress(table, read)
	}
}

// userOf says whether rows of user id may come in: "" when they may, else
// why not. A user next-auth's users table does not have, latchkey may.
func (r *run) userOf(ctx context.Context, ids []string) (map[string]string, error) {
	var unknown []string
	for _, id := range ids {
		if _, ok := r.users[id]; !ok {
			unknown = append(unknown, id)
		}
	}
	there, err := r.dst.ExistingUsers(ctx, unknown)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		switch st := r.users[id]; {
		case st == userSkipped:
			out[id] = "its user " + id + " was skipped"
		case st == userIn || st == userThere:
		default:
			if _, ok := there[id]; !ok {
				out[id] = "its user " + id + " is in neither next-auth's users nor latchkey's"
			}
		}
	}
	return out, nil
}
