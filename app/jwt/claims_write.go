package jwt

import (
	"math"
	"slices"
	"strconv"

	"github.com/latchkey-auth/latchkey/app/jsonstr"
)

// The writer half of claims.go: exactly json.Encoder's bytes (HTML escaping
// off, sorted keys) for the value types claims hold.

// stamp is what Encode sets on every token, in place of the caller's values.
type stamp struct {
	iat, exp int64
	jti      [36]byte
}

// jsonWriter appends JSON to buf; keys is scratch for sorting map keys, used
// as a stack by nested maps so that writing needs no allocation once warm.
type jsonWriter struct {
	buf  []byte
	keys []string
}

// appendClaims writes claims as json.Encoder with SetEscapeHTML(false) would
// (without its trailing newline), with st's iat, exp and jti in place of any
// the claims hold when st is not nil. ok is false for a value it does not
// write (the caller falls back to encoding/json).
func (w *jsonWriter) appendClaims(claims map[string]any, st *stamp) bool {
	if claims == nil && st == nil {
		w.buf = append(w.buf, "null"...)
		return true
	}
	start := len(w.keys)
	defer func() { w.keys = w.keys[:start] }()
	for k := range claims {
		if st != nil && (k == "iat" || k == "exp" || k == "jti") {
			continue
		}
		w.keys = append(w.keys, k)
	}
	if st != nil {
		w.keys = append(w.keys, "iat", "exp", "jti")
	}
	end := len(w.keys)
	slices.Sort(w.keys[start:end])
	w.buf = append(w.buf, '{')
	for i := start; i < end; i++ {
		if i > start {
			w.buf = append(w.buf, ',')
		}
		k := w.keys[i]
		w.buf = jsonstr.Append(w.buf, k, false)
		w.buf = append(w.buf, ':')
		switch {
		case st != nil && k == "iat":
			w.buf = strconv.AppendInt(w.buf, st.iat, 10)
		case st != nil && k == "exp":
			w.buf = strconv.AppendInt(w.buf, st.exp, 10)
		case st != nil && k == "jti":
			w.buf = append(append(append(w.buf, '"'), st.jti[:]...), '"')
		default:
			if !w.value(claims[k], 1) {
				return false
			}
		}
	}
	w.buf = append(w.buf, '}')
	return true
}

func (w *jsonWriter) value(v any, depth int) bool {
	if depth >= maxDepth {
		return false
	}
	switch v := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case string:
		w.buf = jsonstr.Append(w.buf, v, false)
	case *string: // session.DefaultClaims holds the user's *string fields
		if v == nil {
			w.buf = append(w.buf, "null"...)
		} else {
			w.buf = jsonstr.Append(w.buf, *v, false)
		}
	case bool:
		w.buf = strconv.AppendBool(w.buf, v)
	case float64:
		b, ok := appendFloat(w.buf, v)
		if !ok {
			return false
		}
		w.buf = b
	case int64:
		w.buf = strconv.AppendInt(w.buf, v, 10)
	case int:
		w.buf = strconv.AppendInt(w.buf, int64(v), 10)
	case map[string]any:
		if v == nil {
			w.buf = append(w.buf, "null"...)
			return true
		}
		start := len(w.keys)
		for k := range v {
			w.keys = append(w.keys, k)
		}
		end := len(w.keys)
		slices.Sort(w.keys[start:end])
		w.buf = append(w.buf, '{')
		for i := start; i < end; i++ {
			if i > start {
				w.buf = append(w.buf, ',')
			}
			k := w.keys[i] // re-read: a nested map may have grown w.keys
			w.buf = jsonstr.Append(w.buf, k, false)
			w.buf = append(w.buf, ':')
			if !w.value(v[k], depth+1) {
				w.keys = w.keys[:start]
				return false
			}
		}
		w.keys = w.keys[:start]
		w.buf = append(w.buf, '}')
	case []any:
		if v == nil {
			w.buf = append(w.buf, "null"...)
			return true
		}
		w.buf = append(w.buf, '[')
		for i, x := range v {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if !w.value(x, depth+1) {
				return false
			}
		}
		w.buf = append(w.buf, ']')
	default:
		return false
	}
	return true
}

// appendFloat is encoding/json's float64 encoding (ES6 number to string);
// NaN and ±Inf, which encoding/json refuses, are declined.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"
