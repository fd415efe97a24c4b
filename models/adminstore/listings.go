// Package adminstore holds the queries behind the admin commands' listings
// (`latchkey users list`, `sessions list`, `users show`), which an operator
// runs against the database of live instances. It is a feature package of
// models (models/<feature>store, on models.Store's connection); the writes
// those commands make (DeleteUser, unlinking, revoking) are the core's and
// stay in models.
package adminstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Store is the admin listings' storage on a models.Store's database.
type Store struct{ store *models.Store }

// New returns the listings on s's database (no state of its own).
func New(s *models.Store) *Store { return &Store{store: s} }

// db is the shared GORM handle, bound to ctx.
func (s *Store) db(ctx context.Context) *gorm.DB { return s.store.DB().WithContext(ctx) }

// FindUser finds a user by id or, failing that, by e-mail address
// (case-insensitively, as addresses are stored lower-cased).
func (s *Store) FindUser(ctx context.Context, ref string) (*models.User, error) {
	u, err := s.store.UserByID(ctx, ref)
	if errors.Is(err, models.ErrNotFound) && strings.Contains(ref, "@") {
		u, err = s.store.UserByEmail(ctx, ref)
	}
	return u, err
}

// UserOverview is one line of `latchkey users list`.
type UserOverview struct {
	models.User
	Providers []string // the providers of the user's linked accounts, in link order
	Sessions  int64    // unexpired database sessions
}

// Page is where a listing starts and how long it is: After is the Next of
// the page before ("" for the first page); Limit is at most how many rows
// (0: every row, for callers that need them all, like `users show`).
type Page struct {
	After string
	Limit int
}

// ErrBadCursor is a page's After that no listing returned.
var ErrBadCursor = errors.New("not a cursor of this listing (give the one the previous page printed)")

// cursor is a listing's key, (created_at, id), as the opaque text a page
// hands on: the time in Unix microseconds (every stored time is at
// microsecond precision in UTC, see models.DBTime) and the id.
func cursor(at time.Time, id string) string {
	return strconv.FormatInt(at.UnixMicro(), 36) + "." + id
}

// parseCursor reads a cursor; ok is false for "".
func parseCursor(c string) (at time.Time, id string, ok bool, err error) {
	if c == "" {
		return time.Time{}, "", false, nil
	}
	ts, id, found := strings.Cut(c, ".")
	us, perr := strconv.ParseInt(ts, 36, 64)
	if !found || perr != nil || id == "" {
		return time.Time{}, "", false, ErrBadCursor
	}
	return models.DBTime(time.UnixMicro(us)), id, true, nil
}

// UserOverviews lists a page of users, oldest first (by created_at, then
// id), with their linked providers and live database sessions: three
// queries per page, each bounded by the page (a keyset range scan of
// idx_users_created_at_id, then the page's ids in idx_accounts_user_id and
// idx_sessions_user_id), whatever the number of users. next is the
// cursor of the following page, "" after the last.
func (s *Store) UserOverviews(ctx context.Context, now time.Time, p Page) (out []UserOverview, next string, err error) {
	db := s.db(ctx)
	q := db.Order("created_at, id")
	at, id, ok, err := parseCursor(p.After)
	if err != nil {
		return nil, "", err
	}
	if ok {
		q = q.Where("(created_at, id) > (?, ?)", at, id)
	}
	if p.Limit > 0 {
		q = q.Limit(p.Limit + 1)
	}
	var users []models.User
	if err := q.Find(&users).Error; err != nil {
		return nil, "", fmt.Errorf("list users: %w", err)
	}
	if p.Limit > 0 && len(users) > p.Limit {
		users = users[:p.Limit]
		last := users[len(users)-1]
		next = cursor(last.CreatedAt, last.ID)
	}
	out = make([]UserOverview, len(users))
	at2 := make(map[string]*UserOverview, len(users))
	ids := make([]string, len(users))
	for i, u := range users {
		out[i] = UserOverview{User: u, Providers: []string{}}
		at2[u.ID] = &out[i]
		ids[i] = u.ID
	}
	if len(ids) == 0 {
		return out, next, nil
	}
	var links []struct{ UserID, Provider string }
	if err := db.Model(&models.Account{}).Select("user_id, provider").Where("user_id IN ?", ids).
		Order("created_at, id").Scan(&links).Error; err != nil {
		return nil, "", fmt.Errorf("list accounts: %w", err)
	}
	var counts []struct {
		UserID string
		N      int64
	}
	err = db.Model(&models.Session{}).Select("user_id, count(*) AS n").
		Where("user_id IN ? AND expires > ?", ids, models.DBTime(now)).Group("user_id").Scan(&counts).Error
	if err != nil {
		return nil, "", fmt.Errorf("count sessions: %w", err)
	}
	for _, l := range links {
		if o := at2[l.UserID]; o != nil {
			o.Providers = append(o.Providers, l.Provider)
		}
	}
	for _, c := range counts {
		if o := at2[c.UserID]; o != nil {
			o.Sessions = c.N
		}
	}
	return out, next, nil
}

// SessionListing is one database session as `latchkey sessions list`
// shows it: never its token or the token's hash.
type SessionListing struct {
	ID       string    `json:"id"`
	UserID   string    `json:"userId"`
	Email    *string   `json:"email"`
	SignedIn time.Time `json:"signedIn"`
	Expires  time.Time `json:"expires"`
}

// SessionListings returns a page of the unexpired database sessions, of
// one user when userID is not empty, most recent sign-in first (by
// created_at, then id, both descending): a keyset range scan of
// idx_sessions_created_at_id (skipping the expired rows it meets), or one
// user's rows through idx_sessions_user_id; then the page's users'
// addresses by id. Two single-table queries, as a join let SQLite's planner
// start from users and sort every session. next is the cursor of the
// following page, "" after the last.
func (s *Store) SessionListings(ctx context.Context, userID string, now time.Time, p Page) (out []SessionListing, next string, err error) {
	q := s.db(ctx).Table("sessions").Select("id, user_id, created_at AS signed_in, expires").
		Where("expires > ?", models.DBTime(now))
	if userID != "" {
		q = q.Where("user_id = ?", userID)
	}
	at, id, ok, err := parseCursor(p.After)
	if err != nil {
		return nil, "", err
	}
	if ok {
		q = q.Where("(created_at, id) < (?, ?)", at, id)
	}
	if p.Limit > 0 {
		q = q.Limit(p.Limit + 1)
	}
	if err := q.Order("created_at DESC, id DESC").Scan(&out).Error; err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	if p.Limit > 0 && len(out) > p.Limit {
		out = out[:p.Limit]
		last := out[len(out)-1]
		next = cursor(last.SignedIn, last.ID)
	}
	ids := make([]string, 0, len(out))
	for _, l := range out {
		ids = append(ids, l.UserID)
	}
	if len(ids) == 0 {
		return out, next, nil
	}
	var users []struct {
		ID    string
		Email *string
	}
	if err := s.db(ctx).Model(&models.User{}).Select("id, email").Where("id IN ?", ids).Scan(&users).Error; err != nil {
		return nil, "", fmt.Errorf("list sessions' users: %w", err)
	}
	email := make(map[string]*string, len(users))
	for _, u := range users {
		email[u.ID] = u.Email
	}
	for i := range out {
		out[i].Email = email[out[i].UserID]
	}
	return out, next, nil
}

// PendingSignIns counts the unexpired e-mail sign-in links sent to address.
func (s *Store) PendingSignIns(ctx context.Context, address string, now time.Time) (int64, error) {
	var n int64
	err := s.db(ctx).Model(&models.VerificationToken{}).
		Where("identifier = ? AND expires > ?", strings.ToLower(address), models.DBTime(now)).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count pending sign-ins: %w", err)
	}
	return n, nil
}

// RevokedAt is the user's own "not before" time (zero when none): sessions
// signed in before it have been revoked.
func (s *Store) RevokedAt(ctx context.Context, userID string) (time.Time, error) {
	var r models.SessionRevocation
	err := s.db(ctx).Where("user_id = ?", userID).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read revocation: %w", err)
	}
	return time.Unix(r.NotBefore, 0).UTC(), nil
}
