package accountstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
	"github.com/latchkey-auth/latchkey/models/onerow"
	"gorm.io/gorm"
)

// SignIn is one jwt-strategy sign-in: the server-side record of a token
// (ID is its sid claim), so the account page can list it and end it. A
// jwt is not stored, so ending one cannot delete it: EndedAt marks it, and
// every instance polls the ended ids (EndedSignIns) into its revocation
// set until Expires, the sign-in's absolute end, after which the token is
// refused anyway and the purge deletes the row.
type SignIn struct {
	ID        string `gorm:"primaryKey"`
	UserID    string `gorm:"index:idx_sign_ins_user_id;not null;size:36"`
	Device    string `gorm:"not null;default:''"`
	Network   string `gorm:"not null;default:''"`
	CreatedAt time.Time
	// LastSeen moves when the token is re-issued (at most once per
	// update_age), never on a plain read.
	LastSeen time.Time  `gorm:"not null"`
	Expires  time.Time  `gorm:"index:idx_sign_ins_expires;not null"`
	EndedAt  *time.Time `gorm:"index:idx_sign_ins_ended_at,where:ended_at IS NOT NULL"`
	// Provider and Methods are how the user signed in, for the
	// session.created event only: not stored.
	Provider string   `gorm:"-"`
	Methods  []string `gorm:"-"`
}

// CreateSignIn stores a sign-in's record when its token is minted. An
// empty ID gets a new one (set in si); a zero LastSeen is CreatedAt; times
// are stored at models.DBTime's precision. An ID stored already is
// models.ErrConflict.
func (s *Store) CreateSignIn(ctx context.Context, si *SignIn) error {
	if si.ID == "" {
		si.ID = models.NewID()
	}
	if si.CreatedAt.IsZero() {
		si.CreatedAt = time.Now()
	}
	si.CreatedAt = models.DBTime(si.CreatedAt)
	if si.LastSeen.IsZero() {
		si.LastSeen = si.CreatedAt
	}
	si.LastSeen, si.Expires = models.DBTime(si.LastSeen), models.DBTime(si.Expires)
	if si.EndedAt != nil {
		at := models.DBTime(*si.EndedAt)
		si.EndedAt = &at
	}
	err := s.store.Change(ctx, []string{events.SessionCreated}, func(tx *gorm.DB) ([]events.Event, error) {
		if err := tx.Create(si).Error; err != nil {
			return nil, err
		}
		return []events.Event{{Type: events.SessionCreated, Data: events.Session{UserID: si.UserID, SessionID: si.ID,
			Provider: si.Provider, Methods: si.Methods, Strategy: models.StrategyJWT}}}, nil
	})
	if err != nil {
		return fmt.Errorf("create sign-in: %w", models.Conflict(err))
	}
	return nil
}

// SeenSignIn records a re-issue of the sign-in's token at at, which may
// live until end (the sign-in's absolute end under the config of the
// instance re-issuing it). It only moves LastSeen and Expires forward
// (instances' clocks differ a little; a shortened absolute_max_age caps
// the tokens themselves) and leaves ended sign-ins alone; a missing record
// is not an error (purged, or its user deleted: the token is refused
// elsewhere). Expires must cover every token of the sign-in: an ended one
// stays in the instances' revocation set, and its row unpurged, only
// until then (EndedSignIns), so a raised absolute_max_age kept at the
// first end let an ended token sign in again past it.
func (s *Store) SeenSignIn(ctx context.Context, id string, at, end time.Time) error {
	at, end = models.DBTime(at), models.DBTime(end)
	err := s.db().WithContext(ctx).Model(&SignIn{}).
		Where("id = ? AND ended_at IS NULL AND (last_seen < ? OR expires < ?)", id, at, end).
		Updates(map[string]any{
			"last_seen": gorm.Expr("CASE WHEN last_seen < ? THEN ? ELSE last_seen END", at, at),
			"expires":   gorm.Expr("CASE WHEN expires < ? THEN ? ELSE expires END", end, end),
		}).Error
	if err != nil {
		return fmt.Errorf("sign-in seen: %w", err)
	}
	return nil
}

// SignInsOfUser returns the user's live sign-ins at now (not ended, not
// expired), newest first.
func (s *Store) SignInsOfUser(ctx context.Context, userID string, now time.Time) ([]SignIn, error) {
	var out []SignIn
	err := s.db().WithContext(ctx).Where("user_id = ? AND ended_at IS NULL AND expires > ?", userID, models.DBTime(now)).
		Order("created_at DESC, id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list sign-ins of user: %w", err)
	}
	return out, nil
}

// EndSignIn ends the sign-in id at at if it is a live one of userID's:
// false when it is not (another user's, ended already, expired), and then
// nothing changed. One conditional UPDATE: of two requests ending it at
// once, one gets true.
func (s *Store) EndSignIn(ctx context.Context, userID, id string, at time.Time) (bool, error) {
	at = models.DBTime(at)
	var n int64
	err := s.store.Change(ctx, []string{events.SessionEnded}, func(tx *gorm.DB) ([]events.Event, error) {
		r := tx.Model(&SignIn{}).
			Where("id = ? AND user_id = ? AND ended_at IS NULL AND expires > ?", id, userID, at).Update("ended_at", at)
		if n = r.RowsAffected; r.Error != nil || n == 0 {
			return nil, r.Error
		}
		return ended(ctx, userID, id, models.StrategyJWT, events.ScopeOne), nil
	})
	if err != nil {
		return false, fmt.Errorf("end sign-in: %w", err)
	}
	return n == 1, nil
}

// SignedOut reports the sign-out of the jwt sign-in id (session.ended,
// reason "signout"). The token lives in the cookie the sign-out cleared,
// as next-auth's does, so no row changes and the event is the only write;
// none when no endpoint wants it.
func (s *Store) SignedOut(ctx context.Context, userID, id string) error {
	err := s.store.Change(ctx, []string{events.SessionEnded}, func(*gorm.DB) ([]events.Event, error) {
		return []events.Event{{Type: events.SessionEnded, Data: events.Session{UserID: userID, SessionID: id,
			Strategy: models.StrategyJWT, Scope: events.ScopeOne, Reason: events.ReasonSignOut, Actor: events.ActorOf(ctx)}}}, nil
	})
	if err != nil {
		return fmt.Errorf("report sign-out: %w", err)
	}
	return nil
}

// WantsSignOuts reports whether SignedOut writes anything, so a sign-out
// reads its token only when someone is told.
func (s *Store) WantsSignOuts() bool { return s.store.Wants(events.SessionEnded) }

// EndOtherSignIns ends every live sign-in of the user but keepID (the
// caller's own) at at and returns how many it ended.
func (s *Store) EndOtherSignIns(ctx context.Context, userID, keepID string, at time.Time) (int64, error) {
	at = models.DBTime(at)
	var n int64
	err := s.store.Change(ctx, []string{events.SessionEnded}, func(tx *gorm.DB) ([]events.Event, error) {
		r := tx.Model(&SignIn{}).
			Where("user_id = ? AND id <> ? AND ended_at IS NULL AND expires > ?", userID, keepID, at).Update("ended_at", at)
		if n = r.RowsAffected; r.Error != nil || n == 0 {
			return nil, r.Error
		}
		return ended(ctx, userID, "", models.StrategyJWT, events.ScopeOthers), nil
	})
	if err != nil {
		return 0, fmt.Errorf("end other sign-ins: %w", err)
	}
	return n, nil
}

// EndedDigest summarises EndedSignIns for the instances' poll: how many
// there are and the latest ended_at among them (as the driver reads it:
// compared, never parsed), so the poll reads the ids only when it changed.
type EndedDigest struct {
	Rows int64
	Last string
}

// EndedSignInsDigest is EndedSignIns' EndedDigest at now: one aggregate on
// the partial index of ended sign-ins.
func (s *Store) EndedSignInsDigest(ctx context.Context, now time.Time) (EndedDigest, error) {
	var d EndedDigest
	var last sql.NullString
	err := onerow.Scan(s.db().WithContext(ctx).Model(&SignIn{}).Where("ended_at IS NOT NULL AND expires > ?", models.DBTime(now)).
		Select("count(*), max(ended_at)"), &d.Rows, &last)
	if err != nil {
		return d, fmt.Errorf("read ended sign-ins' digest: %w", err)
	}
	d.Last = last.String
	return d, nil
}

// EndedSignIns is every instance's poll: the ids of sign-ins ended and not
// expired at now, whose tokens must be refused. Expired ones are left out:
// their tokens are refused by their own absolute end, so the set stays as
// small as the ended sign-ins of the last absolute_max_age (the partial
// index idx_sign_ins_ended_at holds only those rows).
func (s *Store) EndedSignIns(ctx context.Context, now time.Time) ([]string, error) {
	var ids []string
	err := s.db().WithContext(ctx).Model(&SignIn{}).Where("ended_at IS NOT NULL AND expires > ?", models.DBTime(now)).
		Pluck("id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("list ended sign-ins: %w", err)
	}
	return ids, nil
}
