package signin_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// TestMailedLinks: a link is stored under its purpose and the current
// secret, found under any secret (one mailed before a rotation still
// works), found by no other purpose, and removed when its mail fails.
func TestMailedLinks(t *testing.T) {
	ctx := context.Background()
	rows := map[string]string{} // hash → row
	find := func(hash string) (string, error) {
		if r, ok := rows[hash]; ok {
			return r, nil
		}
		return "", models.ErrNotFound
	}
	under := func(secrets ...string) signin.MailedLinks {
		return signin.MailedLinks{Purpose: "password-reset:", Hashes: func(v string) []string { return email.HashTokens(v, secrets) }}
	}
	var token string
	old := under("old")
	hash, err := old.Send(ctx,
		func(h string) error { rows[h] = "row"; return nil },
		func(tok string) error { token = tok; return nil },
		func(context.Context, string) error { t.Fatal("undo after a delivered mail"); return nil })
	require.NoError(t, err)
	require.Equal(t, email.HashToken("password-reset:"+token, "old"), hash, "the stored bytes: sha256(purpose+token+secret)")

	row, found, err := signin.FindLink(under("new", "old"), token, find)
	require.NoError(t, err, "a link hashed under an older secret is found")
	require.Equal(t, "row", row)
	require.Equal(t, hash, found)

	_, _, err = signin.FindLink(signin.MailedLinks{Purpose: "password-signup:", Hashes: old.Hashes}, token, find)
	require.ErrorIs(t, err, models.ErrNotFound, "another flow's purpose finds nothing")
	_, _, err = signin.FindLink(old, "", find)
	require.ErrorIs(t, err, models.ErrNotFound)

	undone := ""
	_, err = old.Send(ctx,
		func(h string) error { rows[h] = "row2"; return nil },
		func(string) error { return errBoom },
		func(_ context.Context, h string) error { undone = h; delete(rows, h); return nil })
	require.ErrorIs(t, err, errBoom)
	require.NotEmpty(t, undone)
	require.Len(t, rows, 1, "the undelivered link's row is removed")

	_, err = old.Send(ctx, func(string) error { return errors.New("db down") },
		func(string) error { t.Fatal("mailed without a stored row"); return nil },
		func(context.Context, string) error { return nil })
	require.Error(t, err)
}
