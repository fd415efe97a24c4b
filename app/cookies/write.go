package cookies

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Writer sets cookies with next-auth's common attributes: Path=/, HttpOnly,
// SameSite=Lax, Secure under https, no Domain (host-only) unless Domain is set.
type Writer struct {
	Secure bool
	// Path narrows the cookies to a path (a cookie only latchkey's own routes
	// read); "" is next-auth's Path=/.
	Path string
	// Domain, when set, shares the cookies with every host below it
	// (cookies.domain; only the session cookie's writer has one).
	Domain string
}

func (w Writer) path() string {
	if w.Path == "" {
		return "/"
	}
	return w.Path
}

// Set writes name=value. A zero expires makes a browser-session cookie.
func (w Writer) Set(rw http.ResponseWriter, name, value string, expires time.Time, maxAge time.Duration) {
	secs := 0 // a negative maxAge is left out, not Max-Age=0
	if maxAge > 0 {
		secs = int(maxAge / time.Second)
	}
	setOnce(rw, name, w.line(name, value, expires, secs))
}

// line is the Set-Cookie line http.Cookie.String writes for name=Encode(value)
// with the Writer's attributes, built in one allocation: every GET /session
// and many other answers set one or two cookies. maxAge is in seconds:
// > 0 is written, < 0 is Max-Age=0, 0 is left out. An expiry before 1601
// (the zero time) is left out, as http.Cookie does.
func (w Writer) line(name, value string, expires time.Time, maxAge int) string {
	path := w.path()
	if !httpguts.ValidHeaderFieldName(name) {
		return "" // an invalid name: dropped, as http.SetCookie does
	}
	if !validPath(path) {
		// http.Cookie drops the bad bytes, with a log line: let it.
		c := &http.Cookie{Name: name, Value: Encode(value), Path: path, Domain: w.Domain, MaxAge: maxAge,
			HttpOnly: true, Secure: w.Secure, SameSite: http.SameSiteLaxMode}
		if !expires.IsZero() {
			c.Expires = expires.UTC()
		}
		return c.String()
	}
	const (
		domainAttr  = "; Domain="
		expiresAttr = "; Expires="
		maxAgeAttr  = "; Max-Age="
		secureAttr  = "; Secure"
		tail        = "; HttpOnly" // then Secure, then SameSite
		sameSite    = "; SameSite=Lax"
	)
	var date, age [len(http.TimeFormat)]byte
	var dateText, ageText []byte
	if !expires.IsZero() && expires.UTC().Year() >= 1601 {
		dateText = expires.UTC().AppendFormat(date[:0], http.TimeFormat)
	}
	switch {
	case maxAge > 0:
		ageText = strconv.AppendInt(age[:0], int64(maxAge), 10)
	case maxAge < 0:
		ageText = append(age[:0], '0')
	}
	n := len(name) + 1 + encodedLen(value) + len("; Path=") + len(path) + len(tail) + len(sameSite)
	if w.Domain != "" {
		n += len(domainAttr) + len(w.Domain)
	}
	if dateText != nil {
		n += len(expiresAttr) + len(dateText)
	}
	if ageText != nil {
		n += len(maxAgeAttr) + len(ageText)
	}
	if w.Secure {
		n += len(secureAttr)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(name)
	b.WriteByte('=')
	writeEncoded(&b, value)
	b.WriteString("; Path=")
	b.WriteString(path)
	if w.Domain != "" {
		b.WriteString(domainAttr)
		b.WriteString(w.Domain)
	}
	if dateText != nil {
		b.WriteString(expiresAttr)
		b.Write(dateText)
	}
	if ageText != nil {
		b.WriteString(maxAgeAttr)
		b.Write(ageText)
	}
	b.WriteString(tail)
	if w.Secure {
		b.WriteString(secureAttr)
	}
	b.WriteString(sameSite)
	return b.String()
}

// validPath: the bytes http.Cookie keeps in a Path attribute.
func validPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] >= 0x7f || p[i] == ';' {
			return false
		}
	}
	return true
}

// setOnce adds line, name's Set-Cookie line, replacing any Set-Cookie for
// the same name already on this response in its place: a response should
// set a name at most once (RFC 6265 §4.1.1), so a later decision (rotate
// the CSRF token, replace a session) wins cleanly. Under Track this is
// constant time once the response has indexFrom lines; below that, or
// without Track, it scans.
func setOnce(rw http.ResponseWriter, name, line string) {
	if line == "" {
		return
	}
	h := rw.Header()
	lines := h["Set-Cookie"]
	t := trackerOf(rw)
	var i int
	var found bool
	indexed := t != nil && len(lines) >= indexFrom
	if indexed {
		i, found = t.find(lines, name)
	} else {
		i, found = scan(lines, name)
	}
	if found {
		lines[i] = line
	} else {
		if lines == nil {
			lines = make([]string, 0, 2) // a first visit's two lines (CSRF, callback URL) in one allocation
		}
		i = len(lines)
		lines = append(lines, line)
		h["Set-Cookie"] = lines
	}
	if indexed {
		t.put(lines, name, i)
	}
}

// scan finds name's Set-Cookie line by looking at every line.
func scan(lines []string, name string) (int, bool) {
	for i, l := range lines {
		if lineName(l) == name {
			return i, true
		}
	}
	return 0, false
}

// lineName is the cookie name a Set-Cookie line sets.
func lineName(line string) string {
	name, _, _ := strings.Cut(line, "=")
	return name
}

// Line is a Set-Cookie line built once, for a browser-session cookie whose
// value never changes (the callback-url cookie naming the service origin,
// set on every first visit).
type Line struct{ name, value, encoded, line string }

// Prepare builds name=value's line with the Writer's attributes.
func (w Writer) Prepare(name, value string) Line {
	return Line{name: name, value: value, encoded: Encode(value), line: w.line(name, value, time.Time{}, 0)}
}

// Set writes the prepared line, as Writer.Set would.
func (l Line) Set(rw http.ResponseWriter) { setOnce(rw, l.name, l.line) }

// Read is Read(r, name) for the prepared cookie: when the browser sent
// back the prepared value as the line encoded it (what a browser given the
// line does, on every later request), that value, with no decoding.
func (l Line) Read(r *http.Request) (value string, ok bool) {
	raw, ok := Value(r, l.name)
	switch {
	case !ok:
		return "", false
	case raw == l.encoded:
		return l.value, true
	}
	return decode(raw)
}

// Clear expires a cookie now (Max-Age=0).
func (w Writer) Clear(rw http.ResponseWriter, name string) {
	setOnce(rw, name, w.line(name, "", time.Time{}, -1))
}

// Encode percent-encodes a value like JavaScript's encodeURIComponent, which
// next-auth's cookie library applies (so "a|b" is sent as "a%7Cb").
// Values that need no escaping (JWEs, UUIDs, hex) are returned as they are.
func Encode(v string) string {
	n := encodedLen(v)
	if n == len(v) {
		return v
	}
	var b strings.Builder
	b.Grow(n)
	writeEncoded(&b, v)
	return b.String()
}

// encodedLen is len(Encode(v)).
func encodedLen(v string) int {
	n := len(v)
	for i := 0; i < len(v); i++ {
		if !unreserved(v[i]) {
			n += 2
		}
	}
	return n
}

// writeEncoded writes Encode(v) to b.
func writeEncoded(b *strings.Builder, v string) {
	const hexDigits = "0123456789ABCDEF"
	run := 0 // start of the pending run of unreserved bytes
	for i := 0; i < len(v); i++ {
		c := v[i]
		if unreserved(c) {
			continue
		}
		b.WriteString(v[run:i])
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
		run = i + 1
	}
	b.WriteString(v[run:])
}

// The bytes encodeURIComponent leaves alone (A-Z a-z 0-9 - _ . ! ~ * ' ( )),
// one bit each: every cookie value written passes through unreserved, and a
// shift and a mask per byte is a third of the cost of comparisons (profiled
// under wrk on GET /session without cookies, which sets two).
const (
	unreservedBelow64  = 0x03ff678200000000 // bytes 0-63
	unreservedBelow128 = 0x47fffffe87fffffe // bytes 64-127
)

// unreserved reports whether encodeURIComponent leaves c alone.
func unreserved(c byte) bool {
	switch {
	case c < 64:
		return unreservedBelow64>>c&1 != 0
	case c < 128:
		return unreservedBelow128>>(c-64)&1 != 0
	}
	return false
}

// Read returns a cookie's percent-decoded value; ok is false when the cookie
// is missing or its encoding is malformed.
func Read(r *http.Request, name string) (value string, ok bool) {
	raw, ok := Value(r, name)
	if !ok {
		return "", false
	}
	return decode(raw)
}

func decode(raw string) (string, bool) {
	if !strings.Contains(raw, "%") {
		return raw, true
	}
	v, err := url.PathUnescape(raw)
	if err != nil {
		return "", false
	}
	return v, true
}
