package importstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/latchkey-auth/latchkey/models"
)

// KeySep joins the parts of a two-part key (an account's provider and id,
// a link's identifier and hash): a byte neither part has, which, unlike
// NUL, PostgreSQL's text takes (the import ledger stores these keys).
const KeySep = "\x1f"

// Target is latchkey's database as the import writes it. Build it with
// NewTarget.
type Target struct {
	store *models.Store
	// tx, when set, is the write's transaction the lookups run in.
	tx *gorm.DB
}

// NewTarget returns the import's writer on s's database.
func NewTarget(s *models.Store) *Target { return &Target{store: s} }

func (t *Target) db(ctx context.Context) *gorm.DB {
	if t.tx != nil {
		return t.tx.WithContext(ctx)
	}
	return t.store.DB().WithContext(ctx)
}

// lookupChunk bounds the values one lookup binds: SQLite takes 32 766
// variables a statement and PostgreSQL 65 535, while a batch may hold
// 100 000 rows (--batch-size), accounts and links two values each.
const lookupChunk = 5000

// findChunked runs find on keys in pieces of at most lookupChunk and
// gathers what each piece found.
func findChunked[T, R any](keys []T, find func(part []T, found *[]R) error) ([]R, error) {
	var all []R
	for part := range slices.Chunk(keys, lookupChunk) {
		var some []R
		if err := find(part, &some); err != nil {
			return nil, err
		}
		all = append(all, some...)
	}
	return all, nil
}

// ExistingUsers answers, of ids, those latchkey has, with their e-mails
// ("" for none).
func (t *Target) ExistingUsers(ctx context.Context, ids []string) (map[string]string, error) {
	rows, err := findChunked(ids, func(part []string, found *[]models.User) error {
		return t.db(ctx).Select("id", "email").Where("id IN ?", part).Find(found).Error
	})
	if err != nil {
		return nil, fmt.Errorf("look up users: %w", err)
	}
	out := make(map[string]string, len(rows))
	for _, u := range rows {
		out[u.ID] = deref(u.Email)
	}
	return out, nil
}

// UsersByEmail answers, of emails (lower-case, as latchkey stores them),
// those a latchkey user has, with that user's id.
func (t *Target) UsersByEmail(ctx context.Context, emails []string) (map[string]string, error) {
	rows, err := findChunked(emails, func(part []string, found *[]models.User) error {
		return t.db(ctx).Select("id", "email").Where("email IN ?", part).Find(found).Error
	})
	if err != nil {
		return nil, fmt.Errorf("look up users by e-mail: %w", err)
	}
	out := make(map[string]string, len(rows))
	for _, u := range rows {
		out[deref(u.Email)] = u.ID
	}
	return out, nil
}

// AccountOwners answers, of the provider identities keys ("provider\x1fid"),
// those linked in latchkey, with the user they are linked to.
func (t *Target) AccountOwners(ctx context.Context, keys []string) (map[string]string, error) {
	out := map[string]string{}
	if len(keys) == 0 {
		return out, nil
	}
	pairs := make([][]any, len(keys))
	for i, k := range keys {
		p, id, _ := strings.Cut(k, KeySep)
		pairs[i] = []any{p, id}
	}
	rows, err := findChunked(pairs, func(part [][]any, found *[]models.Account) error {
		return t.db(ctx).Select("provider", "provider_account_id", "user_id").
			Where("(provider, provider_account_id) IN ?", part).Find(found).Error
	})
	if err != nil {
		return nil, fmt.Errorf("look up accounts: %w", err)
	}
	for _, a := range rows {
		out[a.Provider+KeySep+a.ProviderAccountID] = a.UserID
	}
	return out, nil
}

// ExistingSessions answers, of the token hashes, those latchkey has.
func (t *Target) ExistingSessions(ctx context.Context, hashes []string) (map[string]bool, error) {
	found, err := findChunked(hashes, func(part []string, found *[]string) error {
		return t.db(ctx).Model(&models.Session{}).Where("token_hash IN ?", part).Pluck("token_hash", found).Error
	})
	if err != nil {
		return nil, fmt.Errorf("look up sessions: %w", err)
	}
	return set(found), nil
}

// FirstImport is when the earliest import recorded in the ledger ran
// (zero when none did): the migration's start, from which the import
// counts the revocations that end next-auth's sessions (RevokedSince).
func (t *Target) FirstImport(ctx context.Context) (time.Time, error) {
	var first []LedgerEntry
	if err := t.db(ctx).Select("imported_at").Order("imported_at").Limit(1).Find(&first).Error; err != nil {
		return time.Time{}, fmt.Errorf("read the import ledger's start: %w", err)
	}
	if len(first) == 0 {
		return time.Time{}, nil
	}
	return first[0].ImportedAt, nil
}

// RevokedSince answers, of userIDs, those whose sessions a revocation
// (their own, or everyone's: models.AllUsers) ended at or after since:
// sign out everywhere, a password reset, `latchkey sessions revoke`.
func (t *Target) RevokedSince(ctx context.Context, userIDs []string, since time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	if len(userIDs) == 0 {
		return out, nil
	}
	found, err := findChunked(append([]string{models.AllUsers}, userIDs...), func(part []string, found *[]string) error {
		return t.db(ctx).Model(&models.SessionRevocation{}).
			Where("user_id IN ? AND not_before >= ?", part, since.Unix()).Pluck("user_id", found).Error
	})
	if err != nil {
		return nil, fmt.Errorf("look up session revocations: %w", err)
	}
	for _, id := range found {
		if id == models.AllUsers {
			for _, u := range userIDs {
				out[u] = true
			}
			return out, nil
		}
		out[id] = true
	}
	return out, nil
}

// ExistingTokens answers, of the verification tokens (identifier and
// stored hash, "identifier\x1fhash"), those latchkey has.
func (t *Target) ExistingTokens(ctx context.Context, keys []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	pairs := make([][]any, len(keys))
	for i, k := range keys {
		id, hash, _ := strings.Cut(k, KeySep)
		pairs[i] = []any{id, hash}
	}
	rows, err := findChunked(pairs, func(part [][]any, found *[]models.VerificationToken) error {
		return t.db(ctx).Where("(identifier, token_hash) IN ?", part).Find(found).Error
	})
	if err != nil {
		return nil, fmt.Errorf("look up verification tokens: %w", err)
	}
	for _, r := range rows {
		out[r.Identifier+KeySep+r.TokenHash] = true
	}
	return out, nil
}

// LedgerEntry records a row an import brought in or found in latchkey:
// Kind is the table ("users", "accounts", "sessions", "verification
// tokens"), Key the row's (a user's id; "provider\x1fproviderAccountId";
// a session token's hash; "identifier\x1ftoken hash").
type LedgerEntry struct {
	Kind       string    `gorm:"primaryKey"`
	Key        string    `gorm:"primaryKey"`
	ImportedAt time.Time `gorm:"not null"`
}

// TableName is schema step 11's table.
func (LedgerEntry) TableName() string { return "import_ledger" }

// Ledger answers, of keys of kind, those an import recorded.
func (t *Target) Ledger(ctx context.Context, kind string, keys []string) (map[string]bool, error) {
	found, err := findChunked(keys, func(part []string, found *[]string) error {
		return t.db(ctx).Model(&LedgerEntry{}).Where("kind = ? AND key IN ?", kind, part).Pluck("key", found).Error
	})
	if err != nil {
		return nil, fmt.Errorf("read the import ledger: %w", err)
	}
	return set(found), nil
}

// Batch is one page's rows, as latchkey stores them, and the ledger's
// entries for them.
type Batch struct {
	Users    []models.User
	Accounts []models.Account
	Sessions []models.Session
	Tokens   []models.VerificationToken
	Ledger   []LedgerEntry
}

// Write stores b in one transaction: a batch is in whole or not at all,
// so an import stopped half-way leaves no half-imported user, and the
// next run picks up from what is there. A row already stored (by an
// earlier run, or a sign-in on latchkey meanwhile) is left as it is. It
// answers the ledger entries of rows it did not write, which it does not
// record: one latchkey took meanwhile (a sign-up with the user's e-mail,
// a sign-in linking the identity to another user); recorded, a later run
// would skip the row as ended in latchkey.
func (t *Target) Write(ctx context.Context, b Batch) ([]LedgerEntry, error) {
	now := models.DBTime(time.Now())
	for i := range b.Users {
		b.Users[i].CreatedAt, b.Users[i].UpdatedAt = now, now
	}
	for i := range b.Accounts {
		b.Accounts[i].CreatedAt = now
	}
	for i := range b.Ledger {
		b.Ledger[i].ImportedAt = now
	}
	var missed []LedgerEntry
	err := t.db(ctx).Transaction(func(tx *gorm.DB) error {
		skip := tx.Clauses(clause.OnConflict{DoNothing: true}).Omit(clause.Associations)
		for _, rows := range []struct {
			n    int
			rows any
		}{{len(b.Users), &b.Users}, {len(b.Accounts), &b.Accounts}, {len(b.Sessions), &b.Sessions}, {len(b.Tokens), &b.Tokens}} {
			if rows.n == 0 {
				continue // GORM refuses an empty slice
			}
			if err := skip.CreateInBatches(rows.rows, 500).Error; err != nil {
				return err
			}
		}
		var err error
		if missed, err = (&Target{store: t.store, tx: tx}).unwritten(ctx, b); err != nil {
			return err
		}
		out := make(map[[2]string]bool, len(missed))
		for _, e := range missed {
			out[[2]string{e.Kind, e.Key}] = true
		}
		ledger := slices.DeleteFunc(b.Ledger, func(e LedgerEntry) bool { return out[[2]string{e.Kind, e.Key}] })
		if len(ledger) == 0 {
			return nil
		}
		return skip.CreateInBatches(&ledger, 500).Error
	})
	if err != nil {
		return nil, fmt.Errorf("write a batch: %w", err)
	}
	return missed, nil
}

// unwritten answers the ledger entries of b's rows that are not in
// latchkey as b has them after its inserts (each skipped on a conflict).
func (t *Target) unwritten(ctx context.Context, b Batch) ([]LedgerEntry, error) {
	users := keysOf(b.Users, func(u models.User) string { return u.ID })
	accounts := keysOf(b.Accounts, func(a models.Account) string { return a.Provider + KeySep + a.ProviderAccountID })
	hashes := keysOf(b.Sessions, func(s models.Session) string { return s.TokenHash })
	tokens := keysOf(b.Tokens, func(v models.VerificationToken) string { return v.Identifier + KeySep + v.TokenHash })
	found, err1 := t.ExistingUsers(ctx, users)
	owners, err2 := t.AccountOwners(ctx, accounts)
	sessions, err3 := t.ExistingSessions(ctx, hashes)
	links, err4 := t.ExistingTokens(ctx, tokens)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	missed := absent("users", users, func(i int) bool { _, ok := found[users[i]]; return ok })
	missed = append(missed, absent("accounts", accounts, func(i int) bool { return owners[accounts[i]] == b.Accounts[i].UserID })...)
	missed = append(missed, absent("sessions", hashes, func(i int) bool { return sessions[hashes[i]] })...)
	return append(missed, absent("verification tokens", tokens, func(i int) bool { return links[tokens[i]] })...), nil
}

func keysOf[T any](rows []T, key func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = key(r)
	}
	return out
}

// absent is the ledger entries of kind for the keys whose row is not
// there as written.
func absent(kind string, keys []string, written func(i int) bool) []LedgerEntry {
	var out []LedgerEntry
	for i, k := range keys {
		if !written(i) {
			out = append(out, LedgerEntry{Kind: kind, Key: k})
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func set(keys []string) map[string]bool {
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out
}
