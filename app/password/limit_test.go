package password

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A limited hasher computes at most n hashes at once, waits for a slot at
// most its wait, and then answers ErrBusy without hashing.
func TestLimitBoundsConcurrentHashes(t *testing.T) {
	h := Default().Limit(1, 20*time.Millisecond)
	phc, err := h.Hash("correct horse battery staple")
	require.NoError(t, err)

	h.slots <- struct{}{} // every slot taken
	start := time.Now()
	_, _, err = h.Verify(phc, "correct horse battery staple")
	require.ErrorIs(t, err, ErrBusy)
	require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond, "waited for a slot first")
	_, err = h.Hash("another password")
	require.ErrorIs(t, err, ErrBusy)
	<-h.slots

	ok, _, err := h.Verify(phc, "correct horse battery staple")
	require.NoError(t, err)
	require.True(t, ok)

}
