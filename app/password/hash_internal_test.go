package password

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An unknown user is checked against a dummy hash with the current
// parameters: the same Argon2id work as a real user's.
func TestDummyHashHasTheParameters(t *testing.T) {
	p, salt, key, err := decode(dummyDefault)
	require.NoError(t, err)
	require.Equal(t, DefaultParams, p, "update dummyDefault when DefaultParams change")
	require.Len(t, salt, int(DefaultParams.SaltLen))
	require.Len(t, key, int(DefaultParams.KeyLen))

	other := Params{Memory: 64, Time: 3, Threads: 2, SaltLen: 16, KeyLen: 32}
	h, err := New(other)
	require.NoError(t, err)
	p, _, _, err = decode(h.dummy)
	require.NoError(t, err)
	require.Equal(t, other, p)
}
