package cookies

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Writer sets cookies with next-auth's common attributes: Path=/, HttpOnly,
// SameSite=Lax, Secure under https, no Domain (host-only).
type Writer struct {
	Secure bool
	// Path narrows the cookies to a path (a cookie only latchkey's own routes
	// read); "" is next-auth's Path=/.
	Path string
}

func (w Writer) path() string {
	if w.Path == "" {
		return "/"
	}
	return w.Path
}

// Set writes name=value. A zero expires makes a browser-session cookie.
func (w Writer) Set(rw http.ResponseWriter, name, value string, expires time.Time, maxAge time.Duration) {
	c := &http.Cookie{
		Name:     name,
		Value:    Encode(value),
		Path:     w.path(),
		HttpOnly: true,
		Secure:   w.Secure,
		SameSite: http.SameSiteLaxMode,
		Quoted:   false,
	}
	if !expires.IsZero() {
		c.Expires = expires.UTC()
	}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
	}
	setOnce(rw, c)
}

// setOnce adds c, replacing any Set-Cookie for the same name already on this
// response in its place: a response should set a name at most once (RFC 6265
// §4.1.1), so a later decision (rotate the CSRF token, replace a session)
// wins cleanly. Under Track this is constant time once the response has
// indexFrom lines; below that, or without Track, it scans.
func setOnce(rw http.ResponseWriter, c *http.Cookie) {
	line := c.String()
	if line == "" {
		return // an invalid name: dropped, as http.SetCookie does
	}
	h := rw.Header()
	lines := h["Set-Cookie"]
	t := trackerOf(rw)
	var i int
	var found bool
	indexed := t != nil && len(lines) >= indexFrom
	if indexed {
		i, found = t.find(lines, c.Name)
	} else {
		i, found = scan(lines, c.Name)
	}
	if found {
		lines[i] = line
	} else {
		i = len(lines)
		lines = append(lines, line)
		h["Set-Cookie"] = lines
	}
	if indexed {
		t.put(lines, c.Name, i)
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

// Clear expires a cookie now (Max-Age=0).
func (w Writer) Clear(rw http.ResponseWriter, name string) {
	setOnce(rw, &http.Cookie{
		Name:     name,
		Value:    "",
		Path:     w.path(),
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   w.Secure,
		SameSite: http.SameSiteLaxMode,
	})
}

// Encode percent-encodes a value like JavaScript's encodeURIComponent, which
// next-auth's cookie library applies (so "a|b" is sent as "a%7Cb").
// Values that need no escaping (JWEs, UUIDs, hex) are returned as they are.
func Encode(v string) string {
	n := 0
	for i := 0; i < len(v); i++ {
		if !unreserved(v[i]) {
			n++
		}
	}
	if n == 0 {
		return v
	}
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(v)+2*n)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if unreserved(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
	}
	return string(b)
}

// unreserved are the bytes encodeURIComponent leaves alone.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-_.!~*'()", c) >= 0
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
