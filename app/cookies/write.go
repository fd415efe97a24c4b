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
}

// Set writes name=value. A zero expires makes a browser-session cookie.
func (w Writer) Set(rw http.ResponseWriter, name, value string, expires time.Time, maxAge time.Duration) {
	c := &http.Cookie{
		Name:     name,
		Value:    Encode(value),
		Path:     "/",
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
	http.SetCookie(rw, c)
}

// Clear expires a cookie now (Max-Age=0).
func (w Writer) Clear(rw http.ResponseWriter, name string) {
	http.SetCookie(rw, &http.Cookie{
		Name:     name,
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   w.Secure,
		SameSite: http.SameSiteLaxMode,
	})
}

// Encode percent-encodes a value like JavaScript's encodeURIComponent, which
// next-auth's cookie library applies (so "a|b" is sent as "a%7Cb").
func Encode(v string) string {
	return strings.NewReplacer("+", "%20", "%21", "!", "%27", "'", "%28", "(", "%29", ")", "%2A", "*").Replace(url.QueryEscape(v))
}

// Read returns a cookie's percent-decoded value; ok is false when the cookie
// is missing or its encoding is malformed.
func Read(r *http.Request, name string) (value string, ok bool) {
	c, err := r.Cookie(name)
	if err != nil {
		return "", false
	}
	return decode(c.Value)
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
