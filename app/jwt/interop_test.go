package jwt

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// This file holds an independent implementation of the v4 token format,
// written from the wire reference with only crypto/hmac, crypto/aes and
// crypto/cipher (no go-jose, no crypto/hkdf), and the vectors minted by the
// real next-auth and @auth/core packages (testdata/vectors.json).

// refHKDF is RFC 5869 HKDF-SHA256, written out: extract then expand.
func refHKDF(secret, salt []byte, info string, n int) []byte {
	if len(salt) == 0 {
		salt = make([]byte, sha256.Size)
	}
	ext := hmac.New(sha256.New, salt)
	ext.Write(secret)
	prk := ext.Sum(nil)
	var out, prev []byte
	for i := byte(1); len(out) < n; i++ {
		m := hmac.New(sha256.New, prk)
		m.Write(prev)
		m.Write([]byte(info))
		m.Write([]byte{i})
		prev = m.Sum(nil)
		out = append(out, prev...)
	}
	return out[:n]
}

func refV4Key(secret, salt string) []byte {
	info := "NextAuth.js Generated Encryption Key"
	if salt != "" {
		info += " (" + salt + ")"
	}
	return refHKDF([]byte(secret), []byte(salt), info, 32)
}

// refOpenGCM decrypts a dir/A256GCM compact JWE: AAD is the ASCII of the
// header segment, the tag is appended to the ciphertext for Open.
func refOpenGCM(key []byte, tok string) ([]byte, error) {
	p := strings.Split(tok, ".")
	if len(p) != 5 || p[1] != "" {
		return nil, errors.New("not a compact dir JWE")
	}
	var raw [5][]byte
	for i, s := range p {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		raw[i] = b
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if len(raw[2]) != gcm.NonceSize() || len(raw[4]) != gcm.Overhead() {
		return nil, errors.New("bad iv or tag size")
	}
	return gcm.Open(nil, raw[2], append(raw[3], raw[4]...), []byte(p[0]))
}

// refSealGCM builds a dir/A256GCM token with an arbitrary header and payload,
// for tests that need a correctly encrypted but otherwise odd token.
func refSealGCM(key []byte, header, payload string) string {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	iv := make([]byte, gcm.NonceSize())
	rand.Read(iv)
	h := base64.RawURLEncoding.EncodeToString([]byte(header))
	sealed := gcm.Seal(nil, iv, []byte(payload), []byte(h))
	ct, tag := sealed[:len(sealed)-16], sealed[len(sealed)-16:]
	enc := base64.RawURLEncoding.EncodeToString
	return h + ".." + enc(iv) + "." + enc(ct) + "." + enc(tag)
}

func TestDerivedKeysMatchReference(t *testing.T) {
	for _, salt := range []string{"", "next-auth.state", "__Secure-next-auth.session-token"} {
		k := mustKey(t, testSecret, salt, V4)
		if want := refV4Key(testSecret, salt); !reflect.DeepEqual(k.gcm.raw, want) {
			t.Errorf("v4 key for salt %q differs from the reference HKDF", salt)
		}
	}
	k := mustKey(t, testSecret, v5Salt, V5)
	info := "Auth.js Generated Encryption Key (" + v5Salt + ")"
	if !reflect.DeepEqual(k.cbc.raw, refHKDF([]byte(testSecret), []byte(v5Salt), info, 64)) {
		t.Error("v5 A256CBC-HS512 key differs from the reference HKDF")
	}
	if !reflect.DeepEqual(k.gcm.raw, refHKDF([]byte(testSecret), []byte(v5Salt), info, 32)) {
		t.Error("v5 A256GCM key differs from the reference HKDF")
	}
}

// TestReferenceDecryptsOurV4 is the Go→reader direction: a token from our
// Encode opens with the independent implementation.
func TestReferenceDecryptsOurV4(t *testing.T) {
	for _, salt := range []string{"", "next-auth.state"} {
		k := mustKey(t, testSecret, salt, V4)
		tok := mustEncode(t, k, sampleClaims(), time.Hour, t0)
		if !strings.HasPrefix(tok, "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..") {
			t.Fatalf("token does not start with the v4 header: %.60s", tok)
		}
		plain, err := refOpenGCM(refV4Key(testSecret, salt), tok)
		if err != nil {
			t.Fatalf("reference decrypt (salt %q): %v", salt, err)
		}
		var claims map[string]any
		if err := json.Unmarshal(plain, &claims); err != nil {
			t.Fatal(err)
		}
		if claims["email"] != "alice@example.com" || claims["exp"] != float64(t0.Unix()+3600) {
			t.Fatalf("reference decrypt gave %s", plain)
		}
	}
}

// TestOurDecodeReadsReferenceV4 is the reverse: a token sealed by the
// independent implementation decodes.
func TestOurDecodeReadsReferenceV4(t *testing.T) {
	tok := refSealGCM(refV4Key(testSecret, ""), `{"alg":"dir","enc":"A256GCM"}`,
		`{"sub":"u1","exp":1800003600,"iat":1800000000,"jti":"x"}`)
	got, err := mustKey(t, testSecret, "", V4).Decode(tok, t0)
	if err != nil || got["sub"] != "u1" {
		t.Fatalf("Decode = %v, %v", got, err)
	}
}

type vectorFile struct {
	Comment        string         `json:"comment"`
	Secret         string         `json:"secret"`
	ExpectedClaims map[string]any `json:"expected_claims"`
	Vectors        []struct {
		Name        string          `json:"name"`
		Format      string          `json:"format"`
		Salt        string          `json:"salt"`
		Token       string          `json:"token"`
		NodeAccepts bool            `json:"node_accepts"`
		NodeResult  json.RawMessage `json:"node_result"`
	} `json:"vectors"`
}

func loadVectors(t testing.TB) vectorFile {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vf vectorFile
	if err := json.Unmarshal(b, &vf); err != nil {
		t.Fatal(err)
	}
	if len(vf.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return vf
}

func formatOf(t testing.TB, s string) Format {
	switch s {
	case "v4":
		return V4
	case "v5":
		return V5
	}
	t.Fatalf("unknown format %q", s)
	return 0
}

// TestInteropVectors: our Decode must agree with next-auth's / @auth/core's
// own decode on every token they minted — same claims when they accept,
// a rejection when they reject.
func TestInteropVectors(t *testing.T) {
	vf := loadVectors(t)
	now := time.Now() // the valid vectors expire ~100 years after minting
	for _, v := range vf.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			k := mustKey(t, vf.Secret, v.Salt, formatOf(t, v.Format))
			got, err := k.Decode(v.Token, now)
			if !v.NodeAccepts {
				requireInvalid(t, got, err)
				if strings.Contains(string(v.NodeResult), "JWTExpired") && !errors.Is(err, ErrExpired) {
					t.Fatalf("node said expired, we said %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			var want map[string]any
			if err := json.Unmarshal(v.NodeResult, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("claims\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestInteropVectorsCrossChecks: the real tokens are refused by every other
// key: other format, other salt, other secret.
func TestInteropVectorsCrossChecks(t *testing.T) {
	vf := loadVectors(t)
	for _, v := range vf.Vectors {
		if !v.NodeAccepts {
			continue
		}
		f := formatOf(t, v.Format)
		other := V5
		if f == V5 {
			other = V4
		}
		for name, k := range map[string]*Key{
			"other format": mustKey(t, vf.Secret, "cookie", other),
			"other salt":   mustKey(t, vf.Secret, v.Salt+"x", f),
			"other secret": mustKey(t, vf.Secret+"x", v.Salt, f),
		} {
			got, err := k.Decode(v.Token, time.Now())
			if err == nil {
				t.Errorf("%s: %s accepted: %v", v.Name, name, got)
			}
		}
		if f == V4 && v.Salt == "" {
			// The reference implementation reads the real v4 token too.
			if _, err := refOpenGCM(refV4Key(vf.Secret, ""), v.Token); err != nil {
				t.Errorf("reference decrypt of %s: %v", v.Name, err)
			}
		}
	}
}

// TestEmitTokensForNode writes Go-minted tokens, one "format salt token" line
// each, for `node interop.mjs decode` (see testdata/README.md). It only runs
// when JWT_INTEROP_OUT names the output file.
func TestEmitTokensForNode(t *testing.T) {
	out := os.Getenv("JWT_INTEROP_OUT")
	if out == "" {
		t.Skip("set JWT_INTEROP_OUT to write Go-minted tokens for the Node check")
	}
	const secret = "interop-secret"
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	claims := map[string]any{"name": "Alice", "email": "alice@example.com", "sub": "u1", "html": "<&>"}
	for _, c := range []struct {
		tag, salt string
		f         Format
	}{
		{"v4", "", V4},
		{"v4", "next-auth.state", V4},
		{"v5", "authjs.session-token", V5},
		{"v5", "__Secure-authjs.session-token", V5},
	} {
		tok := mustEncode(t, mustKey(t, secret, c.salt, c.f), claims, 24*time.Hour, time.Now())
		salt := c.salt
		if salt == "" {
			salt = "-"
		}
		w.WriteString(c.tag + " " + salt + " " + tok + "\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}
