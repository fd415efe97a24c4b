package stmtcache_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/stmtcache"
)

func TestQuery(t *testing.T) {
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "t.db"))
	require.NoError(t, err)
	_, err = db.Exec("CREATE TABLE g (u TEXT, name TEXT); INSERT INTO g VALUES ('a', 'x'), ('a', 'y'), ('b', 'z')")
	require.NoError(t, err)
	c := stmtcache.New(db, true)
	names := func(u string) []string {
		rows, err := c.Query(context.Background(), "SELECT name FROM g WHERE u = ? ORDER BY name", u)
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			out = append(out, n)
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Equal(t, []string{"x", "y"}, names("a"))
	require.Equal(t, []string{"z"}, names("b"), "the same statement, other arguments")
	require.Empty(t, names("c"))

	_, err = c.Query(context.Background(), "SELECT nope FROM g")
	require.Error(t, err, "a statement that does not prepare")

	c.Close()
	require.NoError(t, db.Close())
	_, err = c.Query(context.Background(), "SELECT name FROM g WHERE u = ?", "a")
	require.Error(t, err, "a closed database")
}
