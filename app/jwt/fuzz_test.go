package jwt

import (
	"testing"
	"time"
)

// FuzzDecode: no input may panic Decode, and anything it accepts must be a
// claims object with a numeric exp. Seeds are real tokens (ours and the
// Node-minted vectors) so mutations reach the header, crypto and claims code.
func FuzzDecode(f *testing.F) {
	k4 := mustKey(f, testSecret, "", V4)
	k5 := mustKey(f, testSecret, v5Salt, V5)
	f.Add(mustEncode(f, k4, sampleClaims(), time.Hour, t0))
	f.Add(mustEncode(f, k5, sampleClaims(), time.Hour, t0))
	f.Add(refSealGCM(k5.gcm.raw, `{"alg":"dir","enc":"A256GCM","kid":"`+k5.gcm.kid+`"}`, `{"exp":1800003600}`))
	for _, v := range loadVectors(f).Vectors {
		f.Add(v.Token)
	}
	for _, s := range []string{"", "....", "a.b.c.d.e", "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0....", "\x00.\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		for _, k := range []*Key{k4, k5} {
			claims, err := k.Decode(tok, t0)
			if err != nil {
				if claims != nil {
					t.Fatalf("claims with error")
				}
				continue
			}
			if _, ok := claims["exp"].(float64); !ok {
				t.Fatalf("accepted claims without numeric exp: %v", claims)
			}
		}
	})
}

// FuzzDecodeAuthentic fuzzes what an attacker cannot normally reach: the
// header and payload of tokens that do authenticate (sealed with the real
// key), so go-jose's header handling and the claims checks see arbitrary
// input past the tag check.
func FuzzDecodeAuthentic(f *testing.F) {
	k4 := mustKey(f, testSecret, "", V4)
	k5 := mustKey(f, testSecret, v5Salt, V5)
	f.Add(`{"alg":"dir","enc":"A256GCM"}`, `{"sub":"u1","exp":1800003600}`)
	f.Add(`{"alg":"dir","enc":"A256GCM","kid":"`+k5.gcm.kid+`"}`, `{"exp":1800003600,"nbf":1,"iat":2}`)
	f.Add(`{"alg":"dir","enc":"A256GCM","zip":"DEF"}`, `{"exp":1e99}`)
	f.Add(`{"alg":"dir","enc":"A256GCM","crit":["b64"],"b64":false}`, `[]`)
	f.Add(`{"alg":"dir","enc":"A256GCM","jwk":{"kty":"oct","k":"AAAA"}}`, `null`)
	f.Fuzz(func(t *testing.T, header, payload string) {
		for _, k := range []*Key{k4, k5} {
			claims, err := k.Decode(refSealGCM(k.gcm.raw, header, payload), t0)
			if err != nil {
				continue
			}
			if _, ok := claims["exp"].(float64); !ok {
				t.Fatalf("accepted claims without numeric exp: %v", claims)
			}
		}
	})
}
