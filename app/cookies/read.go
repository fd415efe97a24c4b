package cookies

import (
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// maxCookies is net/http's default limit on the cookies of one request:
// beyond it r.Cookie and r.Cookies see none, and so does scan. (The
// httpcookiemaxnum GODEBUG setting that moves net/http's limit is not
// followed.)
const maxCookies = 3000

// scanner walks a request's Cookie headers exactly as net/http's
// readCookies does (trimming, "name=value" parts, token names, optional
// double quotes, valid value bytes; anything else skipped) without
// building an *http.Cookie per cookie: GET /session looks up three or four
// cookies on every page load, and r.Cookie parses all of them each time.
type scanner struct {
	lines []string // Cookie header lines not yet started
	line  string   // rest of the current line
}

func newScanner(r *http.Request) scanner {
	lines := r.Header["Cookie"]
	n := 0
	for _, l := range lines {
		n += strings.Count(l, ";") + 1
	}
	if n > maxCookies {
		return scanner{}
	}
	return scanner{lines: lines}
}

// next returns the next well-formed cookie; ok is false at the end. value
// is without the quotes, as http.Cookie.Value.
func (s *scanner) next() (name, value string, ok bool) {
	for {
		name, raw, ok := s.nextRaw()
		if !ok {
			return "", "", false
		}
		if value, ok := wellFormed(name, raw); ok {
			return name, value, true
		}
	}
}

// nextRaw returns the next "name=value" part, not yet checked: a lookup
// by name checks only the cookies of that name (wellFormed).
func (s *scanner) nextRaw() (name, raw string, ok bool) {
	for {
		for s.line == "" {
			if len(s.lines) == 0 {
				return "", "", false
			}
			s.line = textproto.TrimString(s.lines[0])
			s.lines = s.lines[1:]
		}
		var part string
		part, s.line, _ = strings.Cut(s.line, ";")
		part = textproto.TrimString(part)
		if part == "" {
			continue
		}
		name, raw, _ := strings.Cut(part, "=")
		return textproto.TrimString(name), raw, true
	}
}

// wellFormed is what net/http asks of a cookie: a token name and a value
// of valid bytes; value is without its quotes.
func wellFormed(name, raw string) (value string, ok bool) {
	if !httpguts.ValidHeaderFieldName(name) {
		return "", false
	}
	return cookieValue(raw)
}

// cookieValue is net/http's parseCookieValue with double quotes allowed.
func cookieValue(raw string) (string, bool) {
	if len(raw) > 1 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	for i := 0; i < len(raw); i++ {
		if b := raw[i]; b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return "", false
		}
	}
	return raw, true
}

// Value is r.Cookie(name).Value without the allocations: the raw (not
// percent-decoded) value of the first well-formed cookie called name.
func Value(r *http.Request, name string) (string, bool) {
	s := newScanner(r)
	for {
		n, raw, ok := s.nextRaw()
		if !ok {
			return "", false
		}
		if n != name {
			continue // whether another cookie is well formed changes nothing here
		}
		if v, ok := wellFormed(n, raw); ok {
			return v, true
		}
	}
}

// ReadCut is Read followed by strings.Cut(value, string(sep)), except that
// each half is percent-decoded on its own, so a half without escapes is a
// piece of the Cookie header, not a new string. The CSRF cookie, read on
// every request, is "token|hash" sent as "token%7Chash": two hex halves
// and no allocation. ok is false when the cookie is missing or its
// encoding is malformed, as for Read.
func ReadCut(r *http.Request, name string, sep byte) (before, after string, found, ok bool) {
	raw, ok := Value(r, name)
	if !ok {
		return "", "", false, false
	}
	// Find the first sep of the decoded value: a literal one or an escape
	// of it. Escapes before it are checked here (decode checks the rest);
	// an escape is never split.
	for i := 0; i < len(raw); i++ {
		switch {
		case raw[i] == sep:
			return decodeHalves(raw[:i], raw[i+1:])
		case raw[i] == '%':
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return "", "", false, false
			}
			if unhex(raw[i+1])<<4|unhex(raw[i+2]) == sep {
				return decodeHalves(raw[:i], raw[i+3:])
			}
			i += 2
		}
	}
	v, ok := decode(raw)
	return v, "", false, ok
}

func decodeHalves(a, b string) (before, after string, found, ok bool) {
	before, okA := decode(a)
	after, okB := decode(b)
	if !okA || !okB {
		return "", "", false, false
	}
	return before, after, true, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
