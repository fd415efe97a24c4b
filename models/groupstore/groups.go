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
// lookup on the primary key's (user_id, name) prefix.
func (s *Store) Groups(ctx context.Context, userID string) ([]string, error) {
	var names []string
	err := s.db().WithContext(ctx).Model(&Membership{}).Where("user_id = ?", userID).Pluck("name", &names).Error
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	slices.Sort(names)
	return names, nil
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
