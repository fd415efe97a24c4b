package jwt

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// flip replaces the character at i with a different base64url character.
func flip(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestTamperEverySegment(t *testing.T) {
	for _, f := range []Format{V4, V5} {
		k := mustKey(t, testSecret, v5Salt, f)
		tok := mustEncode(t, k, sampleClaims(), time.Hour, t0)
		p := parts(t, tok)
		for seg := range p {
			if p[seg] == "" { // the empty encrypted-key part: any content is tampering
				q := append([]string(nil), p...)
				q[seg] = "AAAA"
				got, err := k.Decode(strings.Join(q, "."), t0)
				requireInvalid(t, got, err)
				continue
			}
			// Every position: canonical-encoding checks make each character
			// count, so even the last character's spare bits cannot be
			// changed unnoticed.
			for i := range len(p[seg]) {
				q := append([]string(nil), p...)
				q[seg] = flip(p[seg], i)
				got, err := k.Decode(strings.Join(q, "."), t0)
				if err == nil {
					t.Fatalf("%v: flipping segment %d char %d was accepted: %v", f, seg, i, got)
				}
				requireInvalid(t, got, err)
			}
		}
	}
}

func TestWrongSecretOrSalt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mint     *Key
		decodeBy *Key
	}{
		{"v4 wrong secret", mustKey(t, testSecret, "", V4), mustKey(t, testSecret+"!", "", V4)},
		{"v4 wrong salt", mustKey(t, testSecret, "", V4), mustKey(t, testSecret, "next-auth.state", V4)},
		{"v4 check vs session", mustKey(t, testSecret, "next-auth.state", V4), mustKey(t, testSecret, "", V4)},
		{"v5 wrong secret", mustKey(t, testSecret, v5Salt, V5), mustKey(t, testSecret+"!", v5Salt, V5)},
		{"v5 http vs https cookie", mustKey(t, testSecret, v5Salt, V5), mustKey(t, testSecret, "__Secure-"+v5Salt, V5)},
		{"v4 token, v5 key", mustKey(t, testSecret, v5Salt, V4), mustKey(t, testSecret, v5Salt, V5)},
		{"v5 token, v4 key", mustKey(t, testSecret, v5Salt, V5), mustKey(t, testSecret, v5Salt, V4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.decodeBy.Decode(mustEncode(t, tc.mint, sampleClaims(), time.Hour, t0), t0)
			requireInvalid(t, got, err)
		})
	}
}

func TestGarbage(t *testing.T) {
	k4 := mustKey(t, testSecret, "", V4)
	k5 := mustKey(t, testSecret, v5Salt, V5)
	good := mustEncode(t, k4, sampleClaims(), time.Hour, t0)
	p := parts(t, good)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	withHeader := func(h string) string { return b64(h) + "." + strings.Join(p[1:], ".") }
	for name, tok := range map[string]string{
		"empty":              "",
		"dots":               "....",
		"five junk parts":    "a.b.c.d.e",
		"JWS":                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
		"six parts":          good + ".AAAA",
		"three parts":        strings.Join(p[:3], "."),
		"padding":            good + "==",
		"newline inside":     good[:20] + "\n" + good[20:],
		"trailing space":     good + " ",
		"standard base64":    strings.Replace(good, "-", "+", 1) + "+/",
		"oversize":           good + strings.Repeat("A", maxTokenLen),
		"long header":        b64(strings.Repeat(" ", 2000)+`{"alg":"dir","enc":"A256GCM"}`) + "." + strings.Join(p[1:], "."),
		"header not JSON":    withHeader("not json"),
		"header array":       withHeader(`["dir"]`),
		"alg none":           withHeader(`{"alg":"none","enc":"A256GCM"}`),
		"alg A256KW":         withHeader(`{"alg":"A256KW","enc":"A256GCM"}`),
		"alg RSA-OAEP":       withHeader(`{"alg":"RSA-OAEP","enc":"A256GCM"}`),
		"enc A128GCM":        withHeader(`{"alg":"dir","enc":"A128GCM"}`),
		"enc A128CBC-HS256":  withHeader(`{"alg":"dir","enc":"A128CBC-HS256"}`),
		"no enc":             withHeader(`{"alg":"dir"}`),
		"kid wrong type":     withHeader(`{"alg":"dir","enc":"A256GCM","kid":7}`),
		"bad iv length":      strings.Join([]string{p[0], "", p[2] + "AAAA", p[3], p[4]}, "."),
		"short tag":          strings.Join([]string{p[0], "", p[2], p[3], p[4][:16]}, "."),
		"tag moved into ct":  strings.Join([]string{p[0], "", p[2], p[3] + p[4][:20], p[4][20:]}, "."),
		"swapped iv and tag": strings.Join([]string{p[0], "", p[4], p[3], p[2]}, "."),
		"binary":             "\x00\xff.\x00..\x01.\x02",
	} {
		for _, k := range []*Key{k4, k5} {
			got, err := k.Decode(tok, t0)
			if err == nil {
				t.Errorf("%s: accepted by %v key", name, k.format)
				continue
			}
			requireInvalid(t, got, err)
			if strings.Contains(err.Error(), "eyJ") {
				t.Errorf("%s: error leaks token material: %v", name, err)
			}
		}
	}
}

// TestPayloadChecks covers correctly encrypted tokens whose contents are
// wrong, sealed with the real key by the reference implementation.
func TestPayloadChecks(t *testing.T) {
	k := mustKey(t, testSecret, "", V4)
	hdr := `{"alg":"dir","enc":"A256GCM"}`
	for name, tc := range map[string]struct {
		header, payload string
		ok              bool
	}{
		"baseline":            {hdr, `{"sub":"u1","exp":1800003600}`, true},
		"fractional exp":      {hdr, `{"exp":1800000000.5}`, true},
		"header key order":    {`{"enc":"A256GCM","alg":"dir"}`, `{"exp":1800003600}`, true},
		"kid ignored in v4":   {`{"alg":"dir","enc":"A256GCM","kid":"whatever"}`, `{"exp":1800003600}`, true},
		"nbf within leeway":   {hdr, `{"exp":1800003600,"nbf":1800000015}`, true},
		"nbf in the future":   {hdr, `{"exp":1800003600,"nbf":1800000016}`, false},
		"no exp":              {hdr, `{"sub":"u1"}`, false},
		"exp string":          {hdr, `{"exp":"1800003600"}`, false},
		"exp null":            {hdr, `{"exp":null}`, false},
		"iat string":          {hdr, `{"exp":1800003600,"iat":"now"}`, false},
		"nbf string":          {hdr, `{"exp":1800003600,"nbf":"x"}`, false},
		"null payload":        {hdr, `null`, false},
		"array payload":       {hdr, `[1]`, false},
		"number payload":      {hdr, `1`, false},
		"trailing junk":       {hdr, `{"exp":1800003600} x`, false},
		"not UTF-8":           {hdr, "{\"exp\":1800003600,\"n\":\"\xff\"}", false},
		"empty payload":       {hdr, ``, false},
		"zip header":          {`{"alg":"dir","enc":"A256GCM","zip":"DEF"}`, `{"exp":1800003600}`, false},
		"crit header":         {`{"alg":"dir","enc":"A256GCM","crit":["exp"],"exp":1}`, `{"exp":1800003600}`, false},
		"enc for wrong key":   {`{"alg":"dir","enc":"A256CBC-HS512"}`, `{"exp":1800003600}`, false},
		"duplicate alg value": {`{"alg":"dir","alg":"none","enc":"A256GCM"}`, `{"exp":1800003600}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := k.Decode(refSealGCM(k.gcm.raw, tc.header, tc.payload), t0)
			if tc.ok && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if !tc.ok {
				requireInvalid(t, got, err)
				t.Log(err)
			}
		})
	}
}

// TestV5KidAndEnc follows @auth/core's decode: A256CBC-HS512 or A256GCM, no
// kid accepted, a present kid must be the thumbprint of the key used.
func TestV5KidAndEnc(t *testing.T) {
	k := mustKey(t, testSecret, v5Salt, V5)
	claims := `{"sub":"u1","exp":1800003600}`
	cbc := func(kid string, extra map[jose.HeaderKey]any) string {
		e, err := jose.NewEncrypter(jose.A256CBC_HS512,
			jose.Recipient{Algorithm: jose.DIRECT, Key: k.cbc.raw, KeyID: kid},
			&jose.EncrypterOptions{ExtraHeaders: extra})
		if err != nil {
			t.Fatal(err)
		}
		obj, err := e.Encrypt([]byte(claims))
		if err != nil {
			t.Fatal(err)
		}
		s, err := obj.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, tc := range map[string]struct {
		tok string
		ok  bool
	}{
		"cbc, right kid": {cbc(k.cbc.kid, nil), true},
		"cbc, no kid":    {cbc("", nil), true},
		"cbc, wrong kid": {cbc("not-the-thumbprint", nil), false},
		"cbc, gcm kid":   {cbc(k.gcm.kid, nil), false},
		"cbc, empty kid": {cbc("", map[jose.HeaderKey]any{"kid": ""}), false},
		"cbc, null kid":  {cbc("", map[jose.HeaderKey]any{"kid": nil}), false},
		"gcm, no kid":    {refSealGCM(k.gcm.raw, `{"alg":"dir","enc":"A256GCM"}`, claims), true},
		"gcm, right kid": {refSealGCM(k.gcm.raw, `{"alg":"dir","enc":"A256GCM","kid":"`+k.gcm.kid+`"}`, claims), true},
		"gcm, cbc kid":   {refSealGCM(k.gcm.raw, `{"alg":"dir","enc":"A256GCM","kid":"`+k.cbc.kid+`"}`, claims), false},
		"gcm, v4 key":    {refSealGCM(refV4Key(testSecret, v5Salt), `{"alg":"dir","enc":"A256GCM"}`, claims), false},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := k.Decode(tc.tok, t0)
			if tc.ok && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if !tc.ok {
				requireInvalid(t, got, err)
				t.Log(err)
			}
		})
	}
}
