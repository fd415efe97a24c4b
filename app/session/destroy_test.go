package session_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// failingStore fails every write, like a database that stays locked.
type failingStore struct{ session.Store }

func (failingStore) DeleteSession(context.Context, string) error {
	return errors.New("database is locked")
}

// Destroy clears the cookie even when the row cannot be deleted, and
// reports the failure so the sign-out is not claimed as done.
func TestDatabaseDestroyClearsCookieOnStoreError(t *testing.T) {
	d := session.NewDatabase(failingStore{}, "next-auth.session-token", cookies.Writer{},
		session.Lifetime{MaxAge: time.Hour, UpdateAge: time.Minute, Now: time.Now})
	r := httptest.NewRequest(http.MethodPost, "/api/auth/signout", nil)
	r.AddCookie(&http.Cookie{Name: "next-auth.session-token", Value: models.NewID()})
	w := httptest.NewRecorder()
	require.Error(t, d.Destroy(context.Background(), w, r))
	set := strings.Join(w.Header().Values("Set-Cookie"), "\n")
	require.Contains(t, set, "next-auth.session-token=; Path=/; Max-Age=0")
}
