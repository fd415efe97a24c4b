package importer

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/importstore"
)

// maxID is the longest id latchkey's tables take.
const maxID = 36

// Bounds of what latchkey keeps, as app/oauth bounds a provider's profile:
// an address as long as the e-mail provider takes, and an identity id (and
// a provider's) small enough for PostgreSQL's index entries.
const (
	maxEmail = 320
	maxKey   = 1024
)

// notText is the reason a row holding such a value is skipped.
const notText = "a value is not text (a NUL byte or invalid UTF-8) or too long for latchkey"

// kept reports whether s is text both databases keep as it is (valid UTF-8
// without a NUL byte: PostgreSQL refuses anything else, where SQLite stores
// it) of at most max bytes. A source row that is not is skipped: written,
// it would fail its whole batch on every run, or be stored differently on
// SQLite and PostgreSQL.
func kept(s string, max int) bool {
	return len(s) <= max && utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// keptOpt is kept for an optional column (nil is kept).
func keptOpt(s *string, max int) bool { return s == nil || kept(*s, max) }

// shown is s as a skip's key, "" when it is not kept text: the summary is
// printed to a terminal, and never repeats a value it refused.
func shown(s string) string {
	if !kept(s, maxKey) {
		return ""
	}
	return s
}

// maxText bounds a column only shown (a scope). A name is cut instead, as
// a sign-in cuts it (shownName), and an image dropped (keptImage).
const maxText = 64 << 10

// keptImage is the image a user comes in with: the sign-in's bound
// (oauth.ImportedImage), so the jwt session cookie that carries it stays
// within what browsers keep; nil, and counted, when it is dropped. Only
// shown, so the user comes in without it rather than not at all.
func (r *run) keptImage(image *string) *string {
	if image == nil {
		return nil
	}
	if img := oauth.ImportedImage(*image); img != "" {
		return &img
	}
	r.sum.ImagesDropped++
	return nil
}

// shownName is the name a user comes in with: the sign-in's rule
// (oauth.ShownName), so an imported name is no longer than one a sign-in
// stores; nil when nothing is left.
func shownName(name *string) *string {
	if name == nil {
		return nil
	}
	if n := oauth.ShownName(*name); n != "" {
		return &n
	}
	return nil
}

func (r *run) importUsers(ctx context.Context) error {
	c := &r.sum.Users
	var cur importstore.Cursor
	for {
		page, next, err := r.src.Users(ctx, cur, r.o.BatchSize)
		if err != nil {
			return err
		}
		c.Read += len(page)
		ids, emails := make([]string, 0, len(page)), make([]string, 0, len(page))
		for _, u := range page {
			if kept(u.ID, maxID) {
				ids = append(ids, u.ID)
			}
			if u.Email != nil && kept(*u.Email, maxEmail) {
				emails = append(emails, strings.ToLower(*u.Email))
			}
		}
		there, err := r.dst.ExistingUsers(ctx, ids)
		if err != nil {
			return err
		}
		owners, err := r.dst.UsersByEmail(ctx, emails)
		if err != nil {
			return err
		}
		ledger, err := r.dst.Ledger(ctx, "users", ids)
		if err != nil {
			return err
		}
		var b importstore.Batch
		for _, u := range page {
			if _, ok := there[u.ID]; ok {
				r.users[u.ID] = userThere
				c.There++
				b.Ledger = append(b.Ledger, importstore.LedgerEntry{Kind: "users", Key: u.ID})
				if u.Email != nil {
					r.emails[strings.ToLower(*u.Email)] = u.ID
				}
				continue
			}
			if ledger[u.ID] {
				r.users[u.ID] = userSkipped
				r.skip(c, "users", u.ID, "deleted in latchkey since an earlier import")
				continue
			}
			if reason := r.judgeUser(u, owners); reason != "" {
				r.users[u.ID] = userSkipped
				r.skip(c, "users", shown(u.ID), reason)
				continue
			}
			row := models.User{ID: u.ID, Name: shownName(u.Name), Image: r.keptImage(u.Image)}
			if u.Email != nil {
				e := strings.ToLower(*u.Email)
				row.Email = &e
				r.emails[e] = u.ID
			}
			if u.EmailVerified != nil {
				v := models.DBTime(*u.EmailVerified)
				row.EmailVerified = &v
			}
			b.Users = append(b.Users, row)
			b.Ledger = append(b.Ledger, importstore.LedgerEntry{Kind: "users", Key: u.ID})
			r.users[u.ID] = userIn
			c.Imported++
		}
		if err := r.write(ctx, c, b); err != nil {
			return err
		}
		r.progress("users", c.Read)
		if next == nil {
			return nil
		}
		cur = next
	}
}

// judgeUser is why u may not come in, or "".
func (r *run) judgeUser(u importstore.User, owners map[string]string) string {
	switch {
	case u.ID == "":
		return "no id"
	case len(u.ID) > maxID:
		return "an id longer than 36 characters"
	case u.Bad != "":
		return u.Bad
	case !kept(u.ID, maxID) || !keptOpt(u.Email, maxEmail) || !keptOpt(u.Name, math.MaxInt):
		return notText
	case u.Email == nil:
		return ""
	}
	e := strings.ToLower(*u.Email)
	if other, ok := r.emails[e]; ok && other != u.ID {
		return "its e-mail is user " + other + "'s but for case (latchkey's e-mails are case-insensitive)"
	}
	if other, ok := owners[e]; ok && other != u.ID {
		return "its e-mail belongs to latchkey user " + other + " (accounts are never linked by e-mail)"
	}
	return ""
}

func (r *run) importAccounts(ctx context.Context) error {
	c := &r.sum.Accounts
	var cur importstore.Cursor
	for {
		page, next, err := r.src.Accounts(ctx, cur, r.o.BatchSize)
		if err != nil {
			return err
		}
		c.Read += len(page)
		userIDs, keys := make([]string, 0, len(page)), make([]string, 0, len(page))
		var good []importstore.Account
		for _, a := range page {
			if !keptAccount(a) {
				r.skip(c, "accounts", shown(a.Provider+"/"+a.PAI), notText)
				continue
			}
			good = append(good, a)
			userIDs = append(userIDs, a.UserID)
			keys = append(keys, a.Provider+importstore.KeySep+a.PAI)
		}
		blocked, err := r.userOf(ctx, userIDs)
		if err != nil {
			return err
		}
		owners, err := r.dst.AccountOwners(ctx, keys)
		if err != nil {
			return err
		}
		ledger, err := r.dst.Ledger(ctx, "accounts", keys)
		if err != nil {
			return err
		}
		var b importstore.Batch
		for _, a := range good {
			key, lkey := a.Provider+"/"+a.PAI, a.Provider+importstore.KeySep+a.PAI
			if reason := blocked[a.UserID]; reason != "" {
				r.skip(c, "accounts", key, reason)
				continue
			}
			if owner, ok := owners[lkey]; ok {
				if owner == a.UserID {
					c.There++
					b.Ledger = append(b.Ledger, importstore.LedgerEntry{Kind: "accounts", Key: lkey})
				} else {
					r.skip(c, "accounts", key, "linked to latchkey user "+owner+" already (never re-linked)")
				}
				continue
			}
			if ledger[lkey] {
				r.skip(c, "accounts", key, "unlinked in latchkey since an earlier import")
				continue
			}
			id := a.ID
			if id == "" || !kept(id, maxID) {
				id = models.NewID()
			}
			acc := models.Account{ID: id, UserID: a.UserID, Type: a.Type, Provider: a.Provider, ProviderAccountID: a.PAI}
			switch {
			case !a.HasTokens:
			case slices.Contains(r.o.KeepTokens, a.Provider):
				acc.AccessToken, acc.RefreshToken, acc.IDToken = a.AccessToken, a.RefreshToken, a.IDToken
				acc.ExpiresAt, acc.TokenType, acc.Scope = a.ExpiresAt, a.TokenType, a.Scope
				if err := r.o.SealTokens(&acc); err != nil {
					return fmt.Errorf("account %q: %w", key, err)
				}
				r.sum.TokensKept++
			default:
				r.sum.TokensDropped++
			}
			b.Accounts = append(b.Accounts, acc)
			b.Ledger = append(b.Ledger, importstore.LedgerEntry{Kind: "accounts", Key: lkey})
			c.Imported++
			if !slices.Contains(r.o.Providers, a.Provider) {
				r.sum.UnknownProviders[a.Provider]++
			}
		}
		if err := r.write(ctx, c, b); err != nil {
			return err
		}
		r.progress("accounts", c.Read)
		if next == nil {
			return nil
		}
		cur = next
	}
}

func (r *run) importSessions(ctx context.Context) error {
	c := &r.sum.Sessions
	now := r.o.Now()
	since, err := r.revokedSince(ctx)
	if err != nil {
		return err
	}
	var cur importstore.Cursor
	for {
		page, next, err := r.src.Sessions(ctx, cur, r.o.BatchSize)
		if err != nil {
			return err
		}
		c.Read += len(page)
		var live []importstore.Session
		var userIDs, hashes []string
		for _, s := range page {
			switch {
			case !kept(s.UserID, maxID):
				r.skip(c, "sessions", "", "its user id is not text or longer than 36 characters")
				continue
			case s.Bad != "":
				r.skip(c, "sessions", "of user "+s.UserID, s.Bad)
				continue
			}
			if !s.Expires.After(now) {
				r.skip(c, "sessions", "", "expired")
				continue
			}
			live = append(live, s)
			userIDs = append(userIDs, s.UserID)
			hashes = append(hashes, session.HashToken(s.Token))
		}
		blocked, err := r.userOf(ctx, userIDs)
		if err != nil {
			return err
		}
		there, err := r.dst.ExistingSessions(ctx, hashes)
		if err != nil {
			return err
		}
		ledger, err := r.dst.Ledger(ctx, "sessions", hashes)
		if err != nil {
			return err
		}
		revoked, err := r.dst.RevokedSince(ctx, userIDs, since)
		if err != nil {
			return err
		}
		var b importstore.Batch
		for i, s := range live {
			switch {
			case s.Token == "":
				r.skip(c, "sessions", "of user "+s.UserID, "no session token")
			case blocked[s.UserID] != "":
				r.skip(c, "sessions", "of user "+s.UserID, blocked[s.UserID])
			case there[hashes[i]]:
				c.There++
				b.Ledger = append(b.Ledger, importstore.LedgerEntry{Kind: "sessions", Key: hashes[i]})
			case ledger[hashes[i]]:
				r.skip(c, "sessions", "", "ended in latchkey since an earlier import (signed out or revoked)")
			case revoked[s.UserID]:
				r.skip(c, "sessions", "of user "+s.UserID, "its user's sessions were revoked in latchkey since the import began")
			default:
				// Signed in "now": next-auth keeps no sign-in time, and
				// absolute_max_age counts from this one.
				b.Sessions = append(b.Sessions, models.Session{ID: models.NewID(), TokenHash: hashes[i], UserID: s.UserID,
					Expires: models.DBTime(s.Expires), CreatedAt: models.DBTime(now)})
				b.Ledger = append(b.Ledger, importstore.LedgerEntry{Kind: "sessions", Key: hashes[i]})
				c.Imported++
			}
		}
		if err := r.write(ctx, c, b); err != nil {
			return err
		}
		r.progress("sessions", c.Read)
		if next == nil {
			return nil
		}
		cur = next
	}
}

// revokedSince is from when a revocation in latchkey keeps a next-auth
// session out: the first import's start (the ledger's earliest entry), or
// this run's when it is the first.
//
// A next-auth session row has an expiry and no sign-in time, so the import
// cannot tell a session signed in on the old server before a revocation
// from one signed in after it. Once the migration has begun, a revocation
// (sign out everywhere, a password reset, `latchkey sessions revoke
// --user` or `--all`) was meant for every session the user had until
// then, on either server: a session of that user read afterwards is
// skipped, failing closed (the user signs in again at worst). A
// revocation from before the migration began cannot have been meant for
// next-auth's sessions, which latchkey did not serve yet, so it does not
// drop them on a first import into a latchkey already in use.
func (r *run) revokedSince(ctx context.Context) (time.Time, error) {
	first, err := r.dst.FirstImport(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if first.IsZero() || first.After(r.began) {
		return r.began, nil
	}
	return first, nil
}

func (r *run) importTokens(ctx context.Context) error {
	c := &r.sum.Tokens
	now := r.o.Now()
	var cur importstore.Cursor
	for {
		page, next, err := r.src.VerificationTokens(ctx, cur, r.o.BatchSize)
		if err != nil {
			return err
		}
		c.Read += len(page)
		var live []importstore.VerificationToken
		var keys []string
		for _, t := range page {
			switch {
			case !kept(t.Identifier, maxEmail):
				r.skip(c, "verification tokens", "", "its identifier is not text or longer than 320 bytes")
			case t.Bad != "":
				r.skip(c, "verification tokens", "for "+t.Identifier, t.Bad)
			case !t.Expires.After(now):
				r.skip(c, "verification tokens", "", "expired")
			case !isHash(t.Token):
				r.skip(c, "verification tokens", "for "+t.Identifier, "not a next-auth token hash (64 hex digits)")
			default:
				live = append(live, t)
				keys = append(keys, t.Identifier+importstore.KeySep+t.Token)
			}
		}
		there, err := r.dst.ExistingTokens(ctx, keys)
		if err != nil {
			return err
		}
		ledger, err := r.dst.Ledger(ctx, "verification tokens", keys)
		if err != nil {
			return err
		}
		var b importstore.Batch
		for i, t := range live {
			entry := importstore.LedgerEntry{Kind: "verification tokens", Key: keys[i]}
			switch {
			case there[keys[i]]:
				c.There++
				b.Ledger = append(b.Ledger, entry)
				continue
			case ledger[keys[i]]:
				r.skip(c, "verification tokens", "", "used or removed in latchkey since an earlier import")
				continue
			}
			b.Ledger = append(b.Ledger, entry)
			b.Tokens = append(b.Tokens, models.VerificationToken{Identifier: t.Identifier, TokenHash: t.Token, Expires: models.DBTime(t.Expires)})
			c.Imported++
		}
		if err := r.write(ctx, c, b); err != nil {
			return err
		}
		r.progress("verification tokens", c.Read)
		if next == nil {
			return nil
		}
		cur = next
	}
}

// keptAccount reports whether every column of a that latchkey stores in
// the clear is kept text (the tokens are sealed, whatever they hold).
func keptAccount(a importstore.Account) bool {
	return a.Provider != "" && a.PAI != "" && kept(a.Provider, maxKey) && kept(a.PAI, maxKey) &&
		kept(a.UserID, maxID) && kept(a.Type, maxKey) && keptOpt(a.TokenType, maxKey) && keptOpt(a.Scope, maxText)
}

// isHash reports whether token is a next-auth verification token as it
// stores it: sha256 in lower-case hex.
func isHash(token string) bool {
	if len(token) != 64 {
		return false
	}
	_, err := hex.DecodeString(token)
	return err == nil && strings.ToLower(token) == token
}
