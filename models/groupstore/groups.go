package groupstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm/clause"

	"github.com/latchkey-auth/latchkey/models"
)

// Groups are the names of the groups the user was added to, sorted
// (byte order, whatever the database's collation), nil when none: one
// lookup on the primary key's (user_id, name) prefix. Forward-auth asks
// for them on every request its cache misses, which at a million users is
// nearly every one, so the query is a prepared statement read without
// GORM (models.Store.Statements): GORM's Pluck cost three times the
// lookup itself (issue #36).
func (s *Store) Groups(ctx context.Context, userID string) ([]string, error) {
	names, err := s.groups(ctx, userID)
	if err != nil {
		s.store.CountFailure(err)
		return nil, fmt.Errorf("list groups: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// GroupsSQL is Groups' prepared statement, for the EXPLAIN test of the
// request paths (models/scalefill): GORM's callbacks do not see it. On
// SQLite the column is an unnamed expression, as in ReadSession's lookup
// (models/sessions.go says why).
func (s *Store) GroupsSQL() string {
	if s.store.Dialect() == models.DialectPostgres {
		return `SELECT name FROM user_groups WHERE user_id = $1`
	}
	return `SELECT CAST(name AS TEXT) AS "" FROM user_groups WHERE user_id = ?`
}

func (s *Store) groups(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.store.Statements().Query(ctx, s.GroupsSQL(), userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return names, rows.Close()
}

// Add puts the user in the group; false when it was in it already (its
// row is left as it was). A user that does not exist is an error (the
// foreign key).
func (s *Store) Add(ctx context.Context, userID, name string, now time.Time) (bool, error) {
	r := s.db().WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&Membership{UserID: userID, Name: name, CreatedAt: models.DBTime(now)})
	if r.Error != nil {
		return false, fmt.Errorf("add to group: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// Remove takes the user out of the group; false when it was not in it.
func (s *Store) Remove(ctx context.Context, userID, name string) (bool, error) {
	r := s.db().WithContext(ctx).Where("user_id = ? AND name = ?", userID, name).Delete(&Membership{})
	if r.Error != nil {
		return false, fmt.Errorf("remove from group: %w", r.Error)
	}
	return r.RowsAffected > 0, nil
}

// GroupCount is a stored group and how many users are in it.
type GroupCount struct {
	Name    string
	Members int64
}

// Counts lists every stored group with its number of members, sorted by
// name (byte order). It reads the whole table (no index on name): an
// admin's question, not a request's.
func (s *Store) Counts(ctx context.Context) ([]GroupCount, error) {
	var out []GroupCount
	err := s.db().WithContext(ctx).Model(&Membership{}).Select("name, COUNT(*) AS members").Group("name").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("count groups: %w", err)
	}
	slices.SortFunc(out, func(a, b GroupCount) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
