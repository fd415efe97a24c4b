package batchpurge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The SQLite purge's batches follow what a batch cost: halved after one
// that held the write lock past the target (down to the least), doubled
// after one well under it (up to the most), kept in between. From the
// first batch, cheap rows reach the full batch in a few steps, and rows
// as dear as at 10⁷ sessions under load (a batch of 100 taking 30–340 ms)
// bring it down to the least within as few.
func TestNextSQLiteBatch(t *testing.T) {
	require.Equal(t, 50, nextSQLiteBatch(100, 5*sqlitePurgeTarget))
	require.Equal(t, sqlitePurgeMinBatch, nextSQLiteBatch(sqlitePurgeMinBatch, time.Second))
	require.Equal(t, sqlitePurgeMinBatch, nextSQLiteBatch(sqlitePurgeMinBatch+1, time.Second))
	require.Equal(t, 40, nextSQLiteBatch(20, sqlitePurgeTarget/10))
	require.Equal(t, sqlitePurgeBatch, nextSQLiteBatch(sqlitePurgeBatch, time.Millisecond))
	require.Equal(t, sqlitePurgeBatch, nextSQLiteBatch(80, 0))
	require.Equal(t, 30, nextSQLiteBatch(30, sqlitePurgeTarget/2), "between a quarter of the target and the target: kept")
	require.Equal(t, 30, nextSQLiteBatch(30, sqlitePurgeTarget), "at the target: kept")

	steps := func(took time.Duration) (n, batches int) {
		n = sqlitePurgeFirstBatch
		for prev := 0; n != prev; batches++ {
			prev, n = n, nextSQLiteBatch(n, took)
		}
		return n, batches
	}
	n, k := steps(time.Millisecond)
	require.Equal(t, sqlitePurgeBatch, n)
	require.LessOrEqual(t, k, 5)
	n, k = steps(200 * time.Millisecond)
	require.Equal(t, sqlitePurgeMinBatch, n)
	require.LessOrEqual(t, k, 3)
}
