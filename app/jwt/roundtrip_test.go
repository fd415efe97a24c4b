package jwt

import (
	"encoding/base64"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		salt   string
		format Format
		header string
	}{
		{"v4 session", "", V4, `{"alg":"dir","enc":"A256GCM"}`},
		{"v4 check cookie", "next-auth.state", V4, `{"alg":"dir","enc":"A256GCM"}`},
		{"v5 session", v5Salt, V5, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := mustKey(t, testSecret, tc.salt, tc.format)
			in := sampleClaims()
			in["iat"], in["exp"], in["jti"] = "stale", "stale", "stale"
			in["nested"] = map[string]any{"roles": []any{"admin"}, "html": "<b>&</b>"}
			tok := mustEncode(t, k, in, 30*24*time.Hour, t0)

			if in["jti"] != "stale" {
				t.Fatal("Encode modified the caller's map")
			}
			p := parts(t, tok)
			if tc.header != "" {
				hdr, _ := base64.RawURLEncoding.DecodeString(p[0])
				if string(hdr) != tc.header {
					t.Fatalf("header = %s, want %s", hdr, tc.header)
				}
			}
			if p[1] != "" {
				t.Fatalf("encrypted key part = %q, want empty", p[1])
			}

			got, err := k.Decode(tok, t0)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got["name"] != "Alice" || got["email"] != "alice@example.com" || got["sub"] != "u1" {
				t.Fatalf("claims = %v", got)
			}
			if v, ok := got["picture"]; !ok || v != nil {
				t.Fatalf("picture = %v, %v; want explicit null kept", v, ok)
			}
			if got["nested"].(map[string]any)["html"] != "<b>&</b>" {
				t.Fatalf("nested = %v", got["nested"])
			}
			if got["iat"] != float64(t0.Unix()) || got["exp"] != float64(t0.Unix()+30*24*3600) {
				t.Fatalf("iat/exp = %v/%v", got["iat"], got["exp"])
			}
			uuidV4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
			if jti, _ := got["jti"].(string); !uuidV4.MatchString(jti) {
				t.Fatalf("jti = %v, want a UUID v4", got["jti"])
			}
		})
	}
}

func TestV5HeaderCarriesThumbprintKid(t *testing.T) {
	k := mustKey(t, testSecret, v5Salt, V5)
	tok := mustEncode(t, k, sampleClaims(), time.Hour, t0)
	hdr, _ := base64.RawURLEncoding.DecodeString(parts(t, tok)[0])
	want := `{"alg":"dir","enc":"A256CBC-HS512","kid":"` + k.cbc.kid + `"}`
	if string(hdr) != want {
		t.Fatalf("header = %s, want %s", hdr, want)
	}
	if len(k.cbc.kid) != 86 { // base64url of a SHA-512 digest
		t.Fatalf("kid length %d", len(k.cbc.kid))
	}
}

func TestEncodeIsFreshEachTime(t *testing.T) {
	k := mustKey(t, testSecret, "", V4)
	a := mustEncode(t, k, sampleClaims(), time.Hour, t0)
	b := mustEncode(t, k, sampleClaims(), time.Hour, t0)
	if a == b {
		t.Fatal("two encodes gave the same token (IV or jti reused)")
	}
}

func TestExpiry(t *testing.T) {
	for _, f := range []Format{V4, V5} {
		t.Run(f.String(), func(t *testing.T) {
			k := mustKey(t, testSecret, v5Salt, f)
			tok := mustEncode(t, k, sampleClaims(), time.Hour, t0)
			exp := t0.Add(time.Hour)
			for _, tc := range []struct {
				now time.Time
				ok  bool
			}{
				{t0, true},
				{exp.Add(-time.Second), true},
				{exp, true},                       // inside the 15 s tolerance
				{exp.Add(14 * time.Second), true}, // still inside
				{exp.Add(15 * time.Second), false},
				{exp.Add(24 * time.Hour), false},
			} {
				got, err := k.Decode(tok, tc.now)
				if tc.ok && err != nil {
					t.Errorf("at exp%+v: %v", tc.now.Sub(exp), err)
				}
				if !tc.ok {
					requireInvalid(t, got, err)
					if !errors.Is(err, ErrExpired) {
						t.Errorf("at exp%+v: error %v is not ErrExpired", tc.now.Sub(exp), err)
					}
				}
			}
		})
	}
}

func TestNewKeyRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		secret, salt string
		f            Format
	}{
		{"", "", V4},
		{"", v5Salt, V5},
		{testSecret, "", V5},
		{testSecret, "", Format(7)},
	} {
		if _, err := NewKey(tc.secret, tc.salt, tc.f); err == nil {
			t.Errorf("NewKey(%q, %q, %v) succeeded", tc.secret, tc.salt, tc.f)
		}
	}
}

// TestConcurrentUse runs Encode and Decode on one Key from many goroutines;
// with -race it guards the "safe for concurrent use" promise, including the
// shared go-jose encrypter.
func TestConcurrentUse(t *testing.T) {
	for _, f := range []Format{V4, V5} {
		k := mustKey(t, testSecret, v5Salt, f)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					tok, err := k.Encode(sampleClaims(), time.Hour, t0)
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := k.Decode(tok, t0); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

func TestZeroKeyDoesNotPanic(t *testing.T) {
	for _, k := range []*Key{nil, {}} {
		if _, err := k.Encode(sampleClaims(), time.Hour, t0); err == nil {
			t.Error("Encode with an uninitialised key succeeded")
		}
		got, err := k.Decode("a.b.c.d.e", t0)
		requireInvalid(t, got, err)
	}
}

func TestEncodeRejectsUnmarshalableClaims(t *testing.T) {
	k := mustKey(t, testSecret, "", V4)
	if _, err := k.Encode(map[string]any{"ch": make(chan int)}, time.Hour, t0); err == nil {
		t.Fatal("Encode accepted a channel")
	}
}
