package jwt

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file reads and writes claims JSON without encoding/json's reflection
// on the paths every GET /session takes. Both halves are exact stand-ins, not
// new dialects:
//
//   - parseObject accepts only a subset of JSON (no backslash escapes, at most
//     maxDepth levels) and, on that subset, gives exactly what json.Unmarshal
//     into a map[string]any gives. Anything else it declines, and the caller
//     falls back to json.Unmarshal, so every rejection is encoding/json's.
//   - appendClaims writes exactly the bytes json.Encoder (SetEscapeHTML(false),
//     sorted keys) writes, for the value types claims hold; for any other type
//     it declines and the caller falls back to encoding/json.
//
// FuzzClaimsJSON holds both to encoding/json.

// maxDepth bounds nesting on the fast paths; deeper values take encoding/json.
const maxDepth = 32

// parseObject parses s, a JSON object, into a map whose keys and string
// values are substrings of s (s is the caller's private copy of the payload,
// so one allocation holds every string). ok is false when s is outside the
// subset described above; s must be valid UTF-8.
func parseObject(s string) (m map[string]any, ok bool) {
	p := parser{s: s}
	p.space()
	if p.i >= len(s) || s[p.i] != '{' {
		return nil, false
	}
	m, ok = p.object(0, 8) // next-auth's claims plus iat, exp, jti: eight
	if !ok {
		return nil, false
	}
	p.space()
	return m, p.i == len(s)
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object parses from the '{' at p.i. Duplicate keys: the last one wins, as
// in json.Unmarshal.
func (p *parser) object(depth, hint int) (map[string]any, bool) {
	if depth >= maxDepth {
		return nil, false
	}
	p.i++ // '{'
	m := make(map[string]any, hint)
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

// array parses from the '[' at p.i; like json.Unmarshal, an empty array is
// a non-nil, empty []any.
func (p *parser) array(depth int) ([]any, bool) {
	if depth >= maxDepth {
		return nil, false
	}
	p.i++ // '['
	a := make([]any, 0)
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

func (p *parser) value(depth int) (any, bool) {
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == '{':
		return p.object(depth, 0)
	case c == '[':
		return p.array(depth)
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *parser) literal(word string) bool {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		return false
	}
	p.i += len(word)
	return true
}

// str parses a string from the '"' at p.i. It declines escapes (they take
// encoding/json) and control characters (which encoding/json rejects). With
// neither, and s valid UTF-8, json.Unmarshal's value is the raw bytes.
func (p *parser) str() (string, bool) {
	start := p.i + 1
	for i := start; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '"':
			p.i = i + 1
			return p.s[start:i], true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// number checks JSON's number grammar (strconv.ParseFloat alone would also
// take "+1", "1_0", "0x1p3", "inf") and then converts as json.Unmarshal
// does; a number out of float64's range is declined (encoding/json rejects it).
func (p *parser) number() (any, bool) {
	s, i := p.s, p.i
	start := i
	if s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return nil, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil {
		return nil, false
	}
	p.i = i
	return f, true
}

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
		w.buf = appendString(w.buf, k)
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
		w.buf = appendString(w.buf, v)
	case *string: // session.DefaultClaims holds the user's *string fields
		if v == nil {
			w.buf = append(w.buf, "null"...)
		} else {
			w.buf = appendString(w.buf, *v)
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
			w.buf = appendString(w.buf, k)
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

// appendString is encoding/json's string encoding with HTML escaping off
// (JSON.stringify does not escape <, > and & either): quote, backslash and
// control characters escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
