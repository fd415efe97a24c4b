// Package events is the catalogue of account events latchkey reports to
// webhook endpoints (issue #34), and the outbox contract the store writes
// them through. The store (models and its feature packages) builds each
// event where it makes the change and writes it in the same transaction,
// so a change that rolls back reports nothing and a committed one always
// does; models/webhookstore implements Outbox and app/webhooks delivers.
//
// Payloads name users, sessions and identities by id. They never carry a
// secret, a token or its hash, a password hash or a session cookie: a
// webhook endpoint is told what happened, not given a way in.
package events

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// The event types. docs/webhooks.md documents each one's data.
const (
	UserCreated    = "user.created"
	UserUpdated    = "user.updated"
	UserDeleted    = "user.deleted"
	AccountLinked  = "account.linked"
	AccountUnlink  = "account.unlinked"
	SessionCreated = "session.created"
	SessionEnded   = "session.ended"
	PasswordChange = "password.changed"
	PasswordReset  = "password.reset"
	PasskeyAdded   = "passkey.added"
	PasskeyRemoved = "passkey.removed"
	TwoFactorOn    = "two_factor.enabled"
	TwoFactorOff   = "two_factor.disabled"
	RecoveryCodes  = "two_factor.recovery_codes_regenerated"
	RecoveryUsed   = "two_factor.recovery_code_used"
	// Test is only ever sent by `latchkey webhooks test`, never queued.
	Test = "webhook.test"
)

// Types lists every type a change can emit (not Test), for config
// validation: an endpoint subscribing to anything else is a typo.
func Types() []string {
	return []string{UserCreated, UserUpdated, UserDeleted, AccountLinked, AccountUnlink,
		SessionCreated, SessionEnded, PasswordChange, PasswordReset, PasskeyAdded, PasskeyRemoved,
		TwoFactorOn, TwoFactorOff, RecoveryCodes, RecoveryUsed}
}

// Event is one account change. The store sets ID and Time when it writes it.
type Event struct {
	ID   string
	Type string
	Time time.Time
	Data any // marshalled to JSON as the body's "data"
}

// Outbox is where the store writes events, inside the transaction of the
// change they report.
type Outbox interface {
	// Wants reports whether any enabled endpoint subscribes to the type;
	// when none does, the store writes nothing and adds no transaction.
	Wants(eventType string) bool
	// Write inserts the events with tx; its error rolls the change back.
	Write(tx *gorm.DB, events []Event) error
}

// Actors: who made a change, in the data of the events that say so.
const (
	ActorUser  = "user"
	ActorAdmin = "admin"
)

type actorKey struct{}

// AsAdmin marks ctx as an operator's (the admin commands): events written
// under it name the actor "admin" instead of "user".
func AsAdmin(ctx context.Context) context.Context {
	return context.WithValue(ctx, actorKey{}, ActorAdmin)
}

// ActorOf is who acts under ctx: ActorAdmin under AsAdmin, else ActorUser.
func ActorOf(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok {
		return a
	}
	return ActorUser
}
