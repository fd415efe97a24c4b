package random_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/random"
)

func TestFormatsAndUniqueness(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		for _, v := range []string{random.Hex(32), random.Base64URL(32), random.UUID(), random.RequestID()} {
			require.False(t, seen[v], "repeated value %s", v)
			seen[v] = true
		}
	}
	require.Regexp(t, `^[0-9a-f]{64}$`, random.Hex(32))
	require.Regexp(t, `^[0-9a-f]{32}$`, random.RequestID())
	require.Regexp(t, `^[A-Za-z0-9_-]{43}$`, random.Base64URL(32))
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, random.UUID())
}
