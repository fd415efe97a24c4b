package jwt

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// stdJSON is what Encode wrote before appendClaims: json.Encoder with HTML
// escaping off, without the trailing newline.
func stdJSON(t testing.TB, v any) ([]byte, bool) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

var claimsSeeds = []string{
	`{"name":"Alice","email":"alice@example.com","picture":null,"sub":"u1","iat":1800000000,"exp":1802592000,"jti":"5b0e3c52-3f7e-4b59-9d1e-6c1f0f3c2a11","auth_time":1800000000}`,
	`{}`, ` { } `, `{"a":1}`, "{\"a\" :\t1 ,\n\"b\":[ ]\r}", `{"a":{}}`, `{"a":[1,"x",null,true,false,{"b":[[]]}]}`,
	`{"a":1,"a":2}`, `{"a":{"x":1},"a":"y"}`, `{"roles":["admin","user"],"org":{"id":7,"name":"Acme"}}`,
	`{"n":-0}`, `{"n":0.000001}`, `{"n":1e-7}`, `{"n":1E+2}`, `{"n":1e21}`, `{"n":123456789012345678901234}`,
	`{"n":1.5}`, `{"n":-12.25e-3}`, `{"n":9007199254740993}`, `{"n":1e400}`, `{"n":-1e-400}`, `{"n":01}`, `{"n":1.}`,
	`{"n":.5}`, `{"n":+1}`, `{"n":-}`, `{"n":0x10}`, `{"n":1_0}`, `{"n":Infinity}`, `{"n":NaN}`,
	`{"s":"a\"b"}`, `{"s":"a\\b"}`, `{"s":"\u00e9\ud83d\ude00"}`, `{"s":"\ud800"}`, `{"s":"tab	inside"}`,
	`{"s":"Zoë <b>&amp;</b>"}`, "{\"s\":\"\u2028\u2029\"}", "{\"s\":\"\x7f\"}", `{"s":"\/"}`,
	`{"a":tru}`, `{"a":true1}`, `{"a":nul}`, `{"a":1,}`, `{,"a":1}`, `{"a":1 "b":2}`, `{"a"}`, `{"a":}`, `{a:1}`,
	`{"a":1}x`, `{"a":1}}`, `[{"a":1}]`, `null`, `"x"`, `1`, ``, `{`, `{"a":[1,]}`, `{"a":[,1]}`,
	strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40),
	strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40),
}

// FuzzClaimsJSON holds the reflection-free paths to encoding/json: what
// parseObject accepts, json.Unmarshal accepts with the same result, and
// appendClaims writes exactly json.Encoder's bytes.
func FuzzClaimsJSON(f *testing.F) {
	for _, s := range claimsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		var want map[string]any
		stdErr := json.Unmarshal([]byte(payload), &want)
		if utf8.ValidString(payload) {
			got, ok := parseObject(payload)
			if ok && (stdErr != nil || want == nil) {
				t.Fatalf("parseObject accepted what json.Unmarshal refuses (%v): %q", stdErr, payload)
			}
			if ok && !reflect.DeepEqual(got, want) {
				t.Fatalf("parseObject(%q)\n got %#v\nwant %#v", payload, got, want)
			}
		}
		// Any string, valid UTF-8 or not, as a key and as a value.
		for _, m := range []map[string]any{want, {"s": payload, payload: []any{payload, 1.5}}} {
			if m == nil {
				continue
			}
			std, stdOK := stdJSON(t, m)
			var w jsonWriter
			ok := w.appendClaims(m, nil)
			if ok && (!stdOK || !bytes.Equal(w.buf, std)) {
				t.Fatalf("appendClaims\n got %s\nwant %s (encoding/json ok: %v)", w.buf, std, stdOK)
			}
		}
	})
}

func TestClaimsJSONSeeds(t *testing.T) {
	// The seeds must reach both outcomes, or the fuzz target proves little.
	accepted, declined := 0, 0
	for _, s := range claimsSeeds {
		if _, ok := parseObject(s); ok {
			accepted++
		} else {
			declined++
		}
	}
	if accepted < 10 || declined < 10 {
		t.Fatalf("accepted %d, declined %d", accepted, declined)
	}
}

// TestAppendClaimsValueTypes: the Go types claims hold on their way in
// (session.DefaultClaims' *string, auth_time's int64) and out (JSON's
// float64 and friends) are written as encoding/json writes them; any other
// type is declined, never guessed.
func TestAppendClaimsValueTypes(t *testing.T) {
	name := "Ada"
	var none *string
	for _, v := range []any{nil, "x", &name, none, true, false, 1.5, math.Copysign(0, -1), 1e21, 1e-7, 1800000000.0,
		int64(-7), 42, map[string]any{"b": 1.0, "a": nil}, map[string]any(nil), []any{}, []any(nil),
		[]any{"x", map[string]any{}}, "\x00\x1f\b\f\n\r\t\"\\<>&\u2028\u2029\xff"} {
		m := map[string]any{"v": v}
		var w jsonWriter
		if !w.appendClaims(m, nil) {
			t.Errorf("%T %v declined", v, v)
			continue
		}
		if std, _ := stdJSON(t, m); !bytes.Equal(w.buf, std) {
			t.Errorf("%T: got %s, want %s", v, w.buf, std)
		}
	}
	for _, v := range []any{[]string{"a"}, map[string]string{}, int32(1), uint(1), time.Time{}, json.Number("1"),
		math.NaN(), math.Inf(1), struct{}{}, []any{make(chan int)}} {
		var w jsonWriter
		if w.appendClaims(map[string]any{"v": v}, nil) {
			t.Errorf("%T accepted: %s", v, w.buf)
		}
	}
}

// TestAppendClaimsStamp: iat, exp and jti replace the caller's, as the
// map-copy Encode did.
func TestAppendClaimsStamp(t *testing.T) {
	st := stamp{iat: 1800000000, exp: 1802592000}
	copy(st.jti[:], "5b0e3c52-3f7e-4b59-9d1e-6c1f0f3c2a11")
	in := sampleClaims()
	in["iat"], in["exp"], in["jti"], in["zzz"] = "stale", "stale", "stale", 1.0
	var w jsonWriter
	if !w.appendClaims(in, &st) {
		t.Fatal("declined")
	}
	c := maps.Clone(in)
	c["iat"], c["exp"], c["jti"] = st.iat, st.exp, string(st.jti[:])
	if std, _ := stdJSON(t, c); !bytes.Equal(w.buf, std) {
		t.Fatalf("got %s\nwant %s", w.buf, std)
	}
	w.buf = w.buf[:0]
	if !w.appendClaims(nil, &st) || !strings.HasPrefix(string(w.buf), `{"exp":1802592000,"iat":1800000000,"jti":"`) {
		t.Fatalf("nil claims: %s", w.buf)
	}
}
