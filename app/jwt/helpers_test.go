package jwt

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// t0 is the fixed clock most tests run at.
var t0 = time.Unix(1_800_000_000, 0)

const (
	testSecret = "test-secret-0123456789"
	v5Salt     = "authjs.session-token"
)

func mustKey(t testing.TB, secret, salt string, f Format) *Key {
	t.Helper()
	k, err := NewKey(secret, salt, f)
	if err != nil {
		t.Fatalf("NewKey(%q, %q, %v): %v", secret, salt, f, err)
	}
	return k
}

func mustEncode(t testing.TB, k *Key, claims map[string]any, maxAge time.Duration, now time.Time) string {
	t.Helper()
	tok, err := k.Encode(claims, maxAge, now)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return tok
}

func sampleClaims() map[string]any {
	return map[string]any{"name": "Alice", "email": "alice@example.com", "picture": nil, "sub": "u1"}
}

// requireInvalid fails unless err is a Decode rejection.
func requireInvalid(t *testing.T, claims map[string]any, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("Decode accepted the token: %v", claims)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v does not wrap ErrInvalid", err)
	}
	if claims != nil {
		t.Fatalf("claims returned with an error: %v", claims)
	}
}

// parts splits a compact token for tests that rebuild one.
func parts(t *testing.T, tok string) []string {
	t.Helper()
	p := strings.Split(tok, ".")
	if len(p) != 5 {
		t.Fatalf("token has %d parts", len(p))
	}
	return p
}
