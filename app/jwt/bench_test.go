package jwt

import (
	"testing"
	"time"
)

// The decode benchmarks model GET /session: one typical default token.
func benchDecode(b *testing.B, f Format) {
	k := mustKey(b, testSecret, v5Salt, f)
	tok := mustEncode(b, k, sampleClaims(), 30*24*time.Hour, t0)
	b.ReportAllocs()
	b.SetBytes(int64(len(tok)))
	for b.Loop() {
		if _, err := k.Decode(tok, t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeV4(b *testing.B) { benchDecode(b, V4) }
func BenchmarkDecodeV5(b *testing.B) { benchDecode(b, V5) }

// GET /session re-encodes at most once per update_age (and at sign-in).
func benchEncode(b *testing.B, f Format) {
	k := mustKey(b, testSecret, v5Salt, f)
	claims := sampleClaims()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Encode(claims, 30*24*time.Hour, t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeV4(b *testing.B) { benchEncode(b, V4) }
func BenchmarkEncodeV5(b *testing.B) { benchEncode(b, V5) }

// Rejecting junk must stay cheap: it is what an attacker can send for free.
func BenchmarkDecodeRejectGarbage(b *testing.B) {
	k := mustKey(b, testSecret, "", V4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Decode("eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..not.a.token", t0); err == nil {
			b.Fatal("accepted")
		}
	}
}

func BenchmarkDecodeRejectTampered(b *testing.B) {
	k := mustKey(b, testSecret, "", V4)
	tok := mustEncode(b, k, sampleClaims(), time.Hour, t0)
	tok = flip(tok, len(tok)-5)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Decode(tok, t0); err == nil {
			b.Fatal("accepted")
		}
	}
}

func BenchmarkNewKeyV5(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewKey(testSecret, v5Salt, V5); err != nil {
			b.Fatal(err)
		}
	}
}
