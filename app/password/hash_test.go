package password_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/password"
)

// cheap keeps most tests fast; the defaults are exercised where they matter.
var cheap = password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

func newHasher(t *testing.T, p password.Params) *password.Hasher {
	t.Helper()
	h, err := password.New(p)
	require.NoError(t, err)
	return h
}

func TestHashIsPHCWithOWASPParameters(t *testing.T) {
	phc, err := password.Hash("correct horse battery staple")
	require.NoError(t, err)
	require.Regexp(t, `^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`, phc)

	ok, rehash, err := password.Verify(phc, "correct horse battery staple")
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, rehash)

	ok, _, err = password.Verify(phc, "correct horse battery stapl")
	require.NoError(t, err)
	require.False(t, ok)

	again, err := password.Hash("correct horse battery staple")
	require.NoError(t, err)
	require.NotEqual(t, phc, again, "each hash has its own salt")
}

func TestVerifyNormalisesNFKC(t *testing.T) {
	h := newHasher(t, cheap)
	phc, err := h.Hash("ﬁnancial-Ⅻ-secret") // ligature ﬁ, roman numeral Ⅻ
	require.NoError(t, err)
	ok, _, err := h.Verify(phc, "financial-XII-secret")
	require.NoError(t, err)
	require.True(t, ok)
}

func TestVerifyAsksForRehashWhenParametersChange(t *testing.T) {
	old := newHasher(t, cheap)
	phc, err := old.Hash("a long enough password")
	require.NoError(t, err)

	stronger := cheap
	stronger.Time = 2
	cur := newHasher(t, stronger)
	ok, rehash, err := cur.Verify(phc, "a long enough password")
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, rehash, "made with t=1, current is t=2")

	ok, rehash, err = cur.Verify(phc, "the wrong password")
	require.NoError(t, err)
	require.False(t, ok)
	require.False(t, rehash, "never ask to rehash on a failed match")

	fresh, err := cur.Hash("a long enough password")
	require.NoError(t, err)
	require.Contains(t, fresh, "$m=64,t=2,p=1$")
	_, rehash, _ = cur.Verify(fresh, "a long enough password")
	require.False(t, rehash)
}

func TestUnknownUserRunsTheSameWork(t *testing.T) {
	// The dummy hash costs what a real one costs (same parameters, see
	// TestDummyHashHasTheParameters); here the wall clock agrees. Runs are
	// interleaved and the fastest of each kind compared, so a busy machine
	// slows both alike.
	phc, err := password.Hash("whatever password")
	require.NoError(t, err)
	verify := func(phc string) time.Duration {
		start := time.Now()
		ok, rehash, err := password.Verify(phc, "a guessed password")
		require.NoError(t, err)
		require.False(t, ok)
		require.False(t, rehash)
		return time.Since(start)
	}
	known, unknown := time.Hour, time.Hour
	for range 5 {
		known = min(known, verify(phc))
		unknown = min(unknown, verify(""))
	}
	require.Greater(t, unknown, known/3, "unknown users must not answer faster (known %v, unknown %v)", known, unknown)
	require.Less(t, unknown, known*3, "unknown users must not answer slower (known %v, unknown %v)", known, unknown)

	h := newHasher(t, cheap)
	ok, _, err := h.Verify("", "anything at all")
	require.NoError(t, err)
	require.False(t, ok, "no password ever matches the dummy")
}

func TestBadInputIsRefusedBeforeHashing(t *testing.T) {
	phc, err := password.Hash("a fine password")
	require.NoError(t, err)
	huge := strings.Repeat("a", 1<<20)
	cases := map[string]struct {
		pw   string
		want error
	}{
		"empty":   {"", password.ErrEmpty},
		"1 MB":    {huge, password.ErrInputTooBig},
		"NUL":     {"pass\x00word-long", password.ErrNUL},
		"bad utf": {"pass\xffword-long", password.ErrInvalidUTF8},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := password.Hash(c.pw)
			require.ErrorIs(t, err, c.want)
			ok, _, err := password.Verify(phc, c.pw)
			require.ErrorIs(t, err, c.want)
			require.False(t, ok)
			require.Less(t, time.Since(start), 40*time.Millisecond, "refused without running Argon2id (one costs ~60 ms)")
		})
	}
}

func TestMalformedHashesAreRefused(t *testing.T) {
	h := newHasher(t, cheap)
	good, err := h.Hash("a fine password")
	require.NoError(t, err)
	parts := strings.Split(good, "$")
	for _, phc := range []string{
		"plain text",
		"$argon2i$v=19$m=64,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=16$m=64,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=+64,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1x$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=4294967295,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1$!!$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1$" + parts[4] + "$",
		good + "$extra",
	} {
		ok, _, err := h.Verify(phc, "a fine password")
		require.ErrorIs(t, err, password.ErrMalformedHash, phc)
		require.False(t, ok)
	}
}

func TestNewRefusesUnsafeParameters(t *testing.T) {
	for _, p := range []password.Params{
		{Memory: 0, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32},
		{Memory: 64, Time: 0, Threads: 1, SaltLen: 16, KeyLen: 32},
		{Memory: 64, Time: 1, Threads: 0, SaltLen: 16, KeyLen: 32},
		{Memory: 64, Time: 1, Threads: 1, SaltLen: 4, KeyLen: 32},
		{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 8},
	} {
		_, err := password.New(p)
		require.Error(t, err, "%+v", p)
	}
	h, err := password.New(password.DefaultParams)
	require.NoError(t, err)
	require.Equal(t, password.DefaultParams, h.Params())
}
