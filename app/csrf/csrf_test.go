package csrf_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/csrf"
)

const secret = "csrf-test-secret-csrf-test-secret"

// hash is next-auth's sha256(token + secret), computed independently.
func hash(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

// issue is a new token and its cookie value "token|hash", as the app
// writes them from Signer.Issue (cookies.HexPair).
func issue(s csrf.Signer) (token, cookieValue string) {
	raw, sum := s.Issue()
	token = hex.EncodeToString(raw[:])
	return token, token + "|" + hex.EncodeToString(sum[:])
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestNew(t *testing.T) {
	s := csrf.NewSigner(secret)
	seen := map[string]bool{}
	for range 100 {
		tok, value := issue(s)
		require.Regexp(t, hex64, tok)
		require.Equal(t, tok+"|"+hash(tok, secret), value)
		require.False(t, seen[tok], "tokens are random")
		seen[tok] = true
		got, ok := s.Parse(value)
		require.True(t, ok)
		require.Equal(t, tok, got)
	}
}

func TestParseNextAuthCookie(t *testing.T) {
	// A value as next-auth would write it for this secret.
	tok := "9c1b2f0e7d3a4b5c6d7e8f90123456789abcdef0123456789abcdef012345678"
	got, ok := csrf.NewSigner(secret).Parse(tok + "|" + hash(tok, secret))
	require.True(t, ok)
	require.Equal(t, tok, got)
}

func TestParseRejects(t *testing.T) {
	s := csrf.NewSigner(secret)
	tok, value := issue(s)
	cases := map[string]string{
		"empty":           "",
		"no separator":    tok + hash(tok, secret),
		"token only":      tok,
		"empty token":     "|" + hash("", secret),
		"empty hash":      tok + "|",
		"wrong hash":      tok + "|" + hash(tok, "other"),
		"upper-case":      tok + "|" + strings.ToUpper(hash(tok, secret)),
		"swapped":         hash(tok, secret) + "|" + tok,
		"hmac-like":       tok + "|" + hash(secret, tok),
		"trailing":        value + "x",
		"extra part":      value + "|x",
		"second token":    strings.Repeat("0", 64) + "|" + hash(tok, secret),
		"huge":            strings.Repeat("a", 10000) + "|" + hash(strings.Repeat("a", 10000), secret),
		"percent-encoded": tok + "%7C" + hash(tok, secret), // callers decode first
	}
	for name, v := range cases {
		_, ok := s.Parse(v)
		require.False(t, ok, name)
	}
	_, ok := csrf.NewSigner("another secret another secret xx").Parse(value)
	require.False(t, ok, "a cookie from another secret")
}

func TestVerify(t *testing.T) {
	tok := strings.Repeat("ab", 32)
	require.True(t, csrf.Verify(tok, tok))
	require.False(t, csrf.Verify(tok, ""))
	require.False(t, csrf.Verify("", ""), "an empty cookie token never verifies")
	require.False(t, csrf.Verify(tok, strings.ToUpper(tok)))
	require.False(t, csrf.Verify(tok, tok[:63]))
	require.False(t, csrf.Verify(tok, tok+" "))
	require.False(t, csrf.Verify(tok, tok+"|"+hash(tok, secret)))
}

// TestRotation: the first secret signs; a cookie signed with any listed
// secret parses; a cookie of a secret no longer listed does not.
func TestRotation(t *testing.T) {
	const older, newer = "older secret older secret older secret", "newer secret newer secret newer secret"
	tok, value := issue(csrf.NewSigner(older))
	rotated := csrf.NewSigner(newer, older)
	got, ok := rotated.Parse(value)
	require.True(t, ok, "a cookie signed before the rotation")
	require.Equal(t, tok, got)

	tok2, value2 := issue(rotated)
	require.Equal(t, tok2+"|"+hash(tok2, newer), value2, "new cookies are signed with the first secret")
	_, ok = csrf.NewSigner(newer).Parse(value)
	require.False(t, ok, "the old secret retired")
}

// Parsing a valid cookie, on every request, allocates nothing.
func TestParseDoesNotAllocate(t *testing.T) {
	s := csrf.NewSigner("retired secret retired secret xx", secret)
	tok := strings.Repeat("ab", 32)
	value := tok + "|" + hash(tok, secret)
	allocs := testing.AllocsPerRun(100, func() {
		if got, ok := s.Parse(value); !ok || got != tok {
			t.Fatal("valid cookie refused")
		}
	})
	require.Zero(t, allocs)
}

// A secret longer than Parse's stack buffer still signs and verifies.
func TestLongSecret(t *testing.T) {
	long := strings.Repeat("long secret ", 100)
	s := csrf.NewSigner(long)
	tok, value := issue(s)
	require.Equal(t, tok+"|"+hash(tok, long), value)
	got, ok := s.Parse(value)
	require.True(t, ok)
	require.Equal(t, tok, got)
	_, ok = csrf.NewSigner(long[1:]).Parse(value)
	require.False(t, ok)
}

// TestIssue: a token is 32 random bytes, its sum next-auth's hash of
// their hex with the first secret, made without an allocation (a CSRF
// cookie issued on every first visit); the hex halves parse.
func TestIssue(t *testing.T) {
	s := csrf.NewSigner(secret, "retired secret retired secret xx")
	seen := map[string]bool{}
	for range 100 {
		raw, sum := s.Issue()
		tok := hex.EncodeToString(raw[:])
		require.Equal(t, hash(tok, secret), hex.EncodeToString(sum[:]))
		require.False(t, seen[tok], "tokens are random")
		seen[tok] = true
		got, ok := s.ParseParts(tok, hex.EncodeToString(sum[:]))
		require.True(t, ok)
		require.Equal(t, tok, got)
	}
	if !raceDetector {
		allocs := testing.AllocsPerRun(100, func() { _, _ = s.Issue() })
		require.Zero(t, allocs)
	}
}
