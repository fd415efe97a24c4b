package groupstore

import (
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// Membership puts a user in a group (admin-given: `latchkey users groups
// add`; groups from config rules are computed, not stored).
type Membership struct {
	UserID    string      `gorm:"primaryKey;size:36"`
	User      models.User `gorm:"constraint:OnDelete:CASCADE"`
	Name      string      `gorm:"primaryKey"`
	CreatedAt time.Time
}

// TableName is user_groups.
func (Membership) TableName() string { return "user_groups" }
