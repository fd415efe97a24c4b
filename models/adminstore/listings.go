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

// UserOverviews lists every user, oldest first, with their linked
// providers and live database sessions: three queries, whatever the number
// of users.
func (s *Store) UserOverviews(ctx context.Context, now time.Time) ([]UserOverview, error) {
	db := s.db(ctx)
	var users []models.User
	if err := db.Order("created_at, id").Find(&users).Error; err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	var links []struct{ UserID, Provider string }
	if err := db.Model(&models.Account{}).Select("user_id, provider").Order("created_at, id").Scan(&links).Error; err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	var counts []struct {
		UserID string
		N      int64
	}
	err := db.Model(&models.Session{}).Select("user_id, count(*) AS n").Where("expires > ?", models.DBTime(now)).
		Group("user_id").Scan(&counts).Error
	if err != nil {
		return nil, fmt.Errorf("count sessions: %w", err)
	}
	out := make([]UserOverview, len(users))
	at := make(map[string]*UserOverview, len(users))
	for i, u := range users {
		out[i] = UserOverview{User: u, Providers: []string{}}
		at[u.ID] = &out[i]
	}
	for _, l := range links {
		if o := at[l.UserID]; o != nil {
			o.Providers = append(o.Providers, l.Provider)
		}
	}
	for _, c := range counts {
		if o := at[c.UserID]; o != nil {
			o.Sessions = c.N
		}
	}
	return out, nil
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

// SessionListings returns the unexpired database sessions, of one user
// when userID is not empty, most recent sign-in first.
func (s *Store) SessionListings(ctx context.Context, userID string, now time.Time) ([]SessionListing, error) {
	q := s.db(ctx).Table("sessions AS s").
		Select("s.id, s.user_id, u.email, s.created_at AS signed_in, s.expires").
		Joins("JOIN users u ON u.id = s.user_id").
		Where("s.expires > ?", models.DBTime(now))
	if userID != "" {
		q = q.Where("s.user_id = ?", userID)
	}
	var out []SessionListing
	if err := q.Order("s.created_at DESC, s.id").Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
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
