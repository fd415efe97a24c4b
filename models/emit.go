package models

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models/events"
)

// Every write that changes an account reports it here, with the
// transaction that makes the change: the event row and the change commit
// or roll back together (issue #34's transactional outbox). Without an
// endpoint that wants the event type, nothing is written and a one-statement
// write keeps its plain path.

// Wants reports whether some webhook endpoint subscribes to one of types.
func (s *Store) Wants(types ...string) bool {
	if s.outbox == nil {
		return false
	}
	for _, t := range types {
		if s.outbox.Wants(t) {
			return true
		}
	}
	return false
}

// Emit writes evs with tx, the transaction of the change they report,
// for the store's feature packages; events no endpoint wants are dropped.
func (s *Store) Emit(tx *gorm.DB, evs ...events.Event) error {
	if s.outbox == nil {
		return nil
	}
	now := time.Now().UTC()
	keep := evs[:0:0]
	for _, ev := range evs {
		if !s.outbox.Wants(ev.Type) {
			continue
		}
		ev.ID, ev.Time = "evt_"+strings.ReplaceAll(NewID(), "-", ""), now
		keep = append(keep, ev)
	}
	if len(keep) == 0 {
		return nil
	}
	if err := s.outbox.Write(tx, keep); err != nil {
		return fmt.Errorf("write %s event: %w", keep[0].Type, err)
	}
	return nil
}

// Change runs write and writes the events it returns in one transaction
// when an endpoint wants one of types; otherwise write runs alone on the
// plain handle and its events are dropped.
func (s *Store) Change(ctx context.Context, types []string, write func(tx *gorm.DB) ([]events.Event, error)) error {
	db := s.db.WithContext(ctx)
	if !s.Wants(types...) {
		_, err := write(db)
		return err
	}
	return db.Transaction(func(tx *gorm.DB) error {
		evs, err := write(tx)
		if err != nil {
			return err
		}
		return s.Emit(tx, evs...)
	})
}

// EventUser is u as events show it (also for the feature stores).
func EventUser(u *User) events.User {
	return events.User{ID: u.ID, Email: u.Email, Name: u.Name, Image: u.Image, EmailVerified: u.EmailVerified}
}

// userCreated is user.created for u, first signed in with provider.
func userCreated(u *User, provider string) events.Event {
	return events.Event{Type: events.UserCreated, Data: events.UserChange{User: EventUser(u), Provider: provider}}
}

// accountLinked is account.linked for acc.
func accountLinked(acc *Account) events.Event {
	return events.Event{Type: events.AccountLinked, Data: events.Account{UserID: acc.UserID, Provider: acc.Provider,
		ProviderAccountID: acc.ProviderAccountID, Type: acc.Type}}
}

// sessionEnded is session.ended for one database session.
func sessionEnded(ctx context.Context, userID, id, reason string) events.Event {
	return events.Event{Type: events.SessionEnded, Data: events.Session{UserID: userID, SessionID: id,
		Strategy: StrategyDatabase, Scope: events.ScopeOne, Reason: reason, Actor: events.ActorOf(ctx)}}
}

// sessionsEnded is session.ended for every session of userID signed in up
// to now (a revocation): database rows deleted and jwt ones refused alike,
// so it names no strategy.
func sessionsEnded(ctx context.Context, userID, reason string) events.Event {
	return events.Event{Type: events.SessionEnded, Data: events.Session{UserID: userID,
		Scope: events.ScopeAll, Reason: reason, Actor: events.ActorOf(ctx)}}
}

// The strategies as session events name them.
const (
	StrategyDatabase = "database"
	StrategyJWT      = "jwt"
)
