package onerow_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/onerow"
)

func TestScan(t *testing.T) {
	s, err := models.Open(filepath.Join(t.TempDir(), "latchkey.db"))
	require.NoError(t, err)
	db := s.DB().WithContext(context.Background())

	var n, sum int64
	require.NoError(t, onerow.Scan(db.Raw("SELECT 2, 40"), &n, &sum))
	require.Equal(t, []int64{2, 40}, []int64{n, sum})
	require.ErrorIs(t, onerow.Scan(db.Raw("SELECT 1 WHERE 0"), &n), sql.ErrNoRows)
	require.Error(t, onerow.Scan(db.Raw("SELECT 1, 2"), &n), "more columns than values")

	// A statement that cannot be prepared (here: the database is closed)
	// is an error, not GORM's empty *sql.Row, whose Scan panics.
	require.NoError(t, s.Close())
	require.Panics(t, func() { _ = db.Raw("SELECT 3").Row().Scan(&n) }, "GORM's Row() on a closed database (why this package exists)")
	require.Error(t, onerow.Scan(db.Raw("SELECT 3"), &n))
}
