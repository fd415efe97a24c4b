package session_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// TestDatabaseSessionAcrossInstances: two instances on one database (each
// its own store handle, as two processes behind a load balancer) serve one
// browser in turns: a session started on one is read and extended on the
// other, and signing out on either ends it on both.
func TestDatabaseSessionAcrossInstances(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		c := freshDatabase(t, dialect)
		clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
		life := session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, Now: clk.Now}
		instance := func(store *models.Store) harness {
			return harness{strategy: session.NewDatabase(store, cookieName, cookies.Writer{}, life), clock: clk}
		}
		storeA := connect(t, c)
		a, b := instance(storeA), instance(connect(t, c))
		u := models.User{ID: models.NewID(), Email: str("both@example.com")}
		require.NoError(t, storeA.CreateUser(context.Background(), &u))

		tab := browser{}
		create(t, a, tab, session.User{ID: u.ID, Email: u.Email}, nil)
		s, _ := read(t, b, tab)
		require.NotNil(t, s, "started on A, read on B")
		require.Equal(t, u.ID, s.User.ID)

		clk.Add(updateAge + time.Minute)
		s, _ = read(t, b, tab)
		require.NotNil(t, s)
		refresh(t, b, tab, s) // B extends the row
		s, _ = read(t, a, tab)
		require.NotNil(t, s)
		require.True(t, clk.Now().Add(maxAge).Equal(s.Expires), "A sees B's extension: %v", s.Expires)

		stolen := tab.clone()
		rec := httptest.NewRecorder()
		require.NoError(t, b.strategy.Destroy(context.Background(), rec, tab.request()))
		for _, h := range []harness{a, b} {
			s, sent := read(t, h, stolen)
			require.Nil(t, s, "signed out on B: the cookie is dead everywhere")
			require.True(t, sent)
		}
	})
}
