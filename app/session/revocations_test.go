package session_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// A revocation ends the sessions signed in before its second, of its user
// only; the AllUsers one ends everyone's; a newer table replaces the old
// one whole; an unchanged one is no change; a nil or empty copy revokes
// nothing.
func TestRevocations(t *testing.T) {
	var none *session.Revocations
	require.False(t, none.Revoked("u", time.Unix(0, 0)))
	r := &session.Revocations{}
	require.False(t, r.Revoked("u", time.Unix(0, 0)), "nothing read yet")

	at := int64(1_900_000_000)
	rows := []models.SessionRevocation{{UserID: "ann", NotBefore: at}}
	require.True(t, r.Set(rows, nil))
	require.False(t, r.Set([]models.SessionRevocation{{UserID: "ann", NotBefore: at}}, nil), "the same table again")
	require.True(t, r.Revoked("ann", time.Unix(at-1, 999_000_000)))
	require.False(t, r.Revoked("ann", time.Unix(at, 0)), "signed in at the not-before second")
	require.False(t, r.Revoked("bob", time.Unix(at-100, 0)))

	require.True(t, r.Set([]models.SessionRevocation{{UserID: "ann", NotBefore: at}, {UserID: models.AllUsers, NotBefore: at - 50}}, nil))
	require.True(t, r.Revoked("bob", time.Unix(at-100, 0)), "everyone's sessions before the global time")
	require.False(t, r.Revoked("bob", time.Unix(at-50, 0)))
	require.True(t, r.Revoked("ann", time.Unix(at-10, 0)), "ann's own time is later")

	require.True(t, r.Set(nil, nil))
	require.False(t, r.Revoked("ann", time.Unix(at-10, 0)), "a purged row revokes nothing any more")

	require.False(t, r.Ended("sid-1"))
	require.True(t, r.Set(nil, []string{"sid-1", "sid-2"}), "sign-ins ended one by one")
	require.True(t, r.Ended("sid-1"))
	require.False(t, r.Ended("sid-3"))
	require.False(t, r.Ended(""), "a token without a sid is ended by no such row")
	require.False(t, r.Set(nil, []string{"sid-2", "sid-1"}), "the same ended set again")
	require.True(t, r.Set(nil, []string{"sid-2"}))
	require.False(t, r.Ended("sid-1"), "an expired record's id leaves the set")
}

// Revoked runs on every GET /session: it must not allocate.
func TestRevokedAllocations(t *testing.T) {
	r := &session.Revocations{}
	r.Set([]models.SessionRevocation{{UserID: "ann", NotBefore: 10}, {UserID: models.AllUsers, NotBefore: 5}}, nil)
	id, at := string([]byte("bob")), time.Unix(20, 0)
	require.Zero(t, testing.AllocsPerRun(100, func() { r.Revoked(id, at) }))
	require.Zero(t, testing.AllocsPerRun(100, func() { r.Ended(id) }))
	rows := []models.SessionRevocation{{UserID: "ann", NotBefore: 10}, {UserID: models.AllUsers, NotBefore: 5}}
	require.Zero(t, testing.AllocsPerRun(100, func() { r.Set(rows, nil) }), "an unchanged poll allocates nothing")
}

// BenchmarkRevoked is the check GET /session adds, against a table of
// 10,000 revoked users.
func BenchmarkRevoked(b *testing.B) {
	rows := make([]models.SessionRevocation, 10_000)
	for i := range rows {
		rows[i] = models.SessionRevocation{UserID: models.NewID(), NotBefore: int64(i)}
	}
	r := &session.Revocations{}
	r.Set(rows, nil)
	id, at := models.NewID(), time.Now()
	b.ReportAllocs()
	for b.Loop() {
		r.Revoked(id, at)
	}
}
