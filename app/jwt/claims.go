package jwt

import "strconv"

// This file and claims_write.go read and write claims JSON without
// encoding/json's reflection on the paths every GET /session takes. Both
// halves are exact stand-ins, not new dialects:
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
