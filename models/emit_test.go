package models

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models/events"
)

// tableOutbox writes each event into test_events with the change's
// transaction, as models/webhookstore's does, so a rollback takes it back.
type tableOutbox struct {
	want map[string]bool // nil: every type
	fail bool            // Write fails: the change must roll back
}

func (o *tableOutbox) Wants(t string) bool { return o.want == nil || o.want[t] }

func (o *tableOutbox) Write(tx *gorm.DB, evs []events.Event) error {
	if o.fail {
		return errors.New("outbox refused")
	}
	for _, ev := range evs {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return err
		}
		if err := tx.Exec("INSERT INTO test_events (id, type, data) VALUES (?, ?, ?)", ev.ID, ev.Type, string(data)).Error; err != nil {
			return err
		}
	}
	return nil
}

// eachStoreWithOutbox runs f on a fresh store of each dialect writing events to o.
func eachStoreWithOutbox(t *testing.T, o *tableOutbox, f func(t *testing.T, s *Store)) {
	t.Helper()
	eachDialect(t, func(t *testing.T, c Config) {
		c.Outbox = o
		s := connect(t, c)
		require.NoError(t, s.db.Exec("CREATE TABLE test_events (id VARCHAR(40) PRIMARY KEY, type TEXT, data TEXT)").Error)
		f(t, s)
	})
}

// written is every event in test_events, type → data objects, in order.
func written(t *testing.T, s *Store) map[string][]map[string]any {
	t.Helper()
	var rows []struct{ ID, Type, Data string }
	require.NoError(t, s.db.Raw("SELECT id, type, data FROM test_events").Scan(&rows).Error)
	out := map[string][]map[string]any{}
	for _, r := range rows {
		require.Regexp(t, `^evt_[0-9a-f]{32}$`, r.ID)
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.Data), &d))
		out[r.Type] = append(out[r.Type], d)
	}
	return out
}

// Each change writes its event with it; the payloads carry ids, never a
// token's hash.
func TestChangesWriteTheirEvents(t *testing.T) {
	eachStoreWithOutbox(t, &tableOutbox{}, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		u := &User{Email: ptr("ann@example.com")}
		acc := &Account{Type: "oidc", Provider: "idp", ProviderAccountID: "sub-1"}
		require.NoError(t, s.CreateUserWithAccount(ctx, u, acc))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "hash-1", AMR: "otp mfa", Provider: "idp",
			SignedIn: now, Expires: now.Add(time.Hour)}))
		require.NoError(t, s.DeleteSession(ctx, "hash-1"))
		require.NoError(t, s.DeleteSession(ctx, "hash-1"), "a second sign-out")
		_, err := s.UnlinkAccount(events.AsAdmin(ctx), u.ID, "idp")
		require.NoError(t, err)
		_, err = s.DeleteUser(ctx, u.ID, now)
		require.NoError(t, err)

		got := written(t, s)
		require.Len(t, got[events.UserCreated], 1)
		require.Equal(t, "ann@example.com", got[events.UserCreated][0]["user"].(map[string]any)["email"])
		require.Equal(t, "idp", got[events.UserCreated][0]["provider"])
		require.Equal(t, map[string]any{"user_id": u.ID, "provider": "idp", "provider_account_id": "sub-1", "type": "oidc"}, got[events.AccountLinked][0])
		created := got[events.SessionCreated]
		require.Len(t, created, 1)
		require.Equal(t, u.ID, created[0]["user_id"])
		require.Equal(t, []any{"otp", "mfa"}, created[0]["methods"])
		require.Equal(t, "database", created[0]["strategy"])
		require.Len(t, created[0]["session_id"], 36)
		require.Equal(t, []map[string]any{{"user_id": u.ID, "session_id": created[0]["session_id"], "strategy": "database",
			"scope": "one", "reason": "signout", "actor": "user"}}, got[events.SessionEnded], "one event: the second sign-out ended nothing")
		require.Equal(t, map[string]any{"user_id": u.ID, "provider": "idp", "actor": "admin"}, got[events.AccountUnlink][0])
		require.Equal(t, map[string]any{"user_id": u.ID, "actor": "user"}, got[events.UserDeleted][0])
		var raw string
		for _, rows := range got {
			b, _ := json.Marshal(rows)
			raw += string(b)
		}
		require.NotContains(t, raw, "hash-1", "no token hash in any payload")
	})
}

// An outbox that fails rolls the change back: no event, no change.
func TestAFailedEventRollsTheChangeBack(t *testing.T) {
	o := &tableOutbox{}
	eachStoreWithOutbox(t, o, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		u := newUser(t, s, "ann@example.com")
		o.fail = true
		defer func() { o.fail = false }()
		require.Error(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "h", SignedIn: now, Expires: now.Add(time.Hour)}))
		require.Zero(t, count(t, s, "sessions"), "no session without its event")
		require.Error(t, s.LinkAccount(ctx, &Account{UserID: u.ID, Type: "oauth", Provider: "gh", ProviderAccountID: "1"}))
		require.Zero(t, count(t, s, "accounts"))
		_, err := s.DeleteUser(ctx, u.ID, now)
		require.Error(t, err)
		_, err = s.UserByID(ctx, u.ID)
		require.NoError(t, err, "the user stays")
		require.Zero(t, count(t, s, "test_events"))
	})
}

// Types no endpoint wants are not written, and the change still happens.
func TestUnwantedEventsAreNotWritten(t *testing.T) {
	eachStoreWithOutbox(t, &tableOutbox{want: map[string]bool{events.UserDeleted: true}}, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		u := &User{Email: ptr("bob@example.com")}
		require.NoError(t, s.CreateUserWithAccount(ctx, u, &Account{Type: "oauth", Provider: "gh", ProviderAccountID: "2"}))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "h", SignedIn: now, Expires: now.Add(time.Hour)}))
		require.EqualValues(t, 1, count(t, s, "sessions"))
		require.Zero(t, count(t, s, "test_events"))
		require.True(t, s.Wants(events.SessionCreated, events.UserDeleted))
		require.False(t, s.Wants(events.SessionCreated))
	})
}
