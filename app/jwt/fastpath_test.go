package jwt

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// TestSameClaims: true only when the claims are still what the payload
// holds, whether a hook edited the map in place or returned another.
func TestSameClaims(t *testing.T) {
	k := mustKey(t, testSecret, "", V4)
	in := sampleClaims()
	in["roles"] = []any{"a"}
	claims, payload, err := k.DecodePayload(mustEncode(t, k, in, time.Hour, t0), t0)
	if err != nil {
		t.Fatal(err)
	}
	if !k.SameClaims(claims, payload) {
		t.Fatalf("unchanged claims reported changed: %s", payload)
	}
	if !k.SameClaims(maps.Clone(claims), payload) {
		t.Fatal("an equal copy reported changed")
	}
	for name, edit := range map[string]func(c map[string]any){
		"name edited":    func(c map[string]any) { c["name"] = "Bob" },
		"claim added":    func(c map[string]any) { c["role"] = "admin" },
		"claim deleted":  func(c map[string]any) { delete(c, "picture") },
		"nested edited":  func(c map[string]any) { c["roles"] = []any{"a", "b"} },
		"type changed":   func(c map[string]any) { c["exp"] = int64(c["exp"].(float64)) + 1 },
		"unserialisable": func(c map[string]any) { c["at"] = time.Now() },
	} {
		c := maps.Clone(claims)
		edit(c)
		if k.SameClaims(c, payload) {
			t.Errorf("%s: reported unchanged", name)
		}
	}
	// next-auth's JSON.stringify keeps insertion order: the same claims in
	// other text are reported changed (a re-issue, once, makes them ours).
	if k.SameClaims(claims, `{"sub":"u1","name":"Alice"}`) || k.SameClaims(nil, "null") {
		t.Fatal("foreign payload reported unchanged")
	}
}

// TestJoseReadsOurTokens: go-jose, which Encode no longer calls, decrypts
// what it writes (next-auth's and @auth/core's readers are checked by the
// Node suite and interop.mjs).
func TestJoseReadsOurTokens(t *testing.T) {
	for _, f := range []Format{V4, V5} {
		k := mustKey(t, testSecret, v5Salt, f)
		all := []map[string]any{sampleClaims(), {"blob": strings.Repeat("x", 5000)}, {}}
		for n := range 33 { // every CBC padding length, a whole block of it included
			all = append(all, map[string]any{"b": strings.Repeat("x", n)})
		}
		for _, claims := range all {
			tok := mustEncode(t, k, claims, time.Hour, t0)
			obj, err := jose.ParseEncryptedCompact(tok, dirOnly, k.encs)
			if err != nil {
				t.Fatalf("%v: parse: %v", f, err)
			}
			plain, err := obj.Decrypt(k.seal.raw)
			if err != nil {
				t.Fatalf("%v: go-jose decrypt: %v", f, err)
			}
			var got map[string]any
			if err := json.Unmarshal(plain, &got); err != nil || got["exp"] != float64(t0.Unix()+3600) {
				t.Fatalf("%v: payload %s", f, plain)
			}
		}
	}
}

// TestDecodeFallbackAgrees: a token whose header is not byte-for-byte ours
// (here: same fields, other order) takes go-jose's header parser and
// decodes to the same claims as the fast path.
func TestDecodeFallbackAgrees(t *testing.T) {
	k := mustKey(t, testSecret, "", V4)
	payload := `{"sub":"u1","exp":1800003600,"n":[1,{"a":"\u00e9"}]}`
	fast, err := k.Decode(refSealGCM(k.gcm.raw, `{"alg":"dir","enc":"A256GCM"}`, payload), t0)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := k.Decode(refSealGCM(k.gcm.raw, `{"enc":"A256GCM","alg":"dir"}`, payload), t0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast %v, fallback %v", fast, slow)
	}
}

func BenchmarkSameClaims(b *testing.B) {
	k := mustKey(b, testSecret, "", V4)
	in := sampleClaims()
	in["auth_time"] = t0.Unix()
	claims, payload, err := k.DecodePayload(mustEncode(b, k, in, time.Hour, t0), t0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !k.SameClaims(claims, payload) {
			b.Fatal("changed")
		}
	}
}
