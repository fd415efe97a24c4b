package webhookstore

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

var whNow = time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC)

// subscribers: "crm" wants everything, "audit" only user.deleted.
func subscribers(eventType string) []string {
	if eventType == "user.deleted" {
		return []string{"crm", "audit"}
	}
	if eventType == "nobody.wants" {
		return nil
	}
	return []string{"crm"}
}

// write queues events through the Outbox in a transaction of its own.
func write(t *testing.T, s *Store, evs ...events.Event) {
	t.Helper()
	o := NewOutbox(subscribers)
	require.NoError(t, s.db().Transaction(func(tx *gorm.DB) error { return o.Write(tx, evs) }))
}

func event(id, typ string, at time.Time) events.Event {
	return events.Event{ID: id, Type: typ, Time: at, Data: map[string]any{"user_id": "u1"}}
}

func TestOutboxWritesOneRowPerSubscriber(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		o := NewOutbox(subscribers)
		require.True(t, o.Wants("session.created"))
		require.False(t, o.Wants("nobody.wants"))

		write(t, s, event("evt_1", "user.deleted", whNow), event("evt_2", "nobody.wants", whNow), event("evt_3", "session.created", whNow))
		rows, err := s.List(t.Context(), Filter{})
		require.NoError(t, err)
		require.Len(t, rows, 3)

		got, err := s.Show(t.Context(), "evt_1")
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, "audit", got[0].Endpoint)
		require.Equal(t, "crm", got[1].Endpoint)
		for _, d := range got {
			require.Equal(t, StatusPending, d.Status)
			require.Equal(t, 0, d.Attempts)
			require.Equal(t, models.DBTime(whNow), d.NextAt.UTC())
			require.Equal(t, models.DBTime(whNow), d.CreatedAt.UTC())
			require.Empty(t, d.LeaseOwner)
			require.Nil(t, d.LeaseUntil)
		}
		require.Equal(t, got[0].Body, got[1].Body, "one body for every endpoint")
		var body map[string]any
		require.NoError(t, json.Unmarshal(got[0].Body, &body))
		require.Equal(t, map[string]any{
			"id": "evt_1", "type": "user.deleted", "timestamp": "2031-05-06T07:08:09.123Z",
			"data": map[string]any{"user_id": "u1"},
		}, body)

		_, err = s.Show(t.Context(), "evt_2")
		require.ErrorIs(t, err, models.ErrNotFound)
	})
}

// A rolled-back change leaves no row: the outbox is the change's
// transaction.
func TestOutboxRollsBackWithTheChange(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		o := NewOutbox(subscribers)
		boom := errors.New("the change failed")
		err := s.db().Transaction(func(tx *gorm.DB) error {
			require.NoError(t, o.Write(tx, []events.Event{event("evt_1", "session.created", whNow)}))
			return boom
		})
		require.ErrorIs(t, err, boom)
		st, err := s.Stats(t.Context(), whNow)
		require.NoError(t, err)
		require.Zero(t, st.Pending)
	})
}

func TestBodyOfNilDataIsAnObject(t *testing.T) {
	b, err := Body("evt_x", "webhook.test", whNow, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"evt_x","type":"webhook.test","timestamp":"2031-05-06T07:08:09.123Z","data":{}}`, string(b))
}
