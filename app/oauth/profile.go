package oauth

import (
	"errors"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a provider's profile. The name is cut, not refused: it is
// only shown. 320 bytes is the longest address the e-mail provider takes.
const (
	maxNameRunes  = 256
	maxEmailBytes = 320
	maxImageBytes = 2048
	// maxIDBytes keeps an identity id inside PostgreSQL's index entries;
	// OpenID Connect's sub is at most 255 characters.
	maxIDBytes = 1024
)

// bounded is p as latchkey keeps it: text of a bounded size, the same on
// SQLite and PostgreSQL (which refuses a NUL that SQLite stores), and
// small enough for a jwt session cookie. A name loses its control
// characters and is cut; an address or image that is not plain text, too
// long, or (the image) not an http(s) URL is dropped. An id that is not
// such text is an error: changed, it could name someone else's identity.
func (p Profile) bounded() (Profile, error) {
	if p.ID == "" || len(p.ID) > maxIDBytes || !plainText(p.ID) {
		return Profile{}, errors.New("profile id is empty, too long or not text")
	}
	p.Name = ShownName(p.Name)
	if len(p.Email) > maxEmailBytes || !plainText(p.Email) {
		p.Email, p.EmailVerified = "", false
	}
	if !imageURL(p.Image) {
		p.Image = ""
	}
	return p, nil
}

// ShownName is a name as latchkey keeps it, from a sign-in's profile or
// an import: without control characters or invalid UTF-8, trimmed, and
// cut at 256 characters. A name is only shown, so it is cut, not refused;
// the cut keeps a jwt session cookie, which carries it, within what
// browsers keep.
func ShownName(name string) string {
	return cut(strings.TrimSpace(strings.Map(dropControl, strings.ToValidUTF8(name, ""))), maxNameRunes)
}

// plainText: valid UTF-8 without control characters.
func plainText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

func dropControl(r rune) rune {
	if unicode.IsControl(r) {
		return -1
	}
	return r
}

// cut keeps the first n runes of s.
func cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// ImportedImage is the image an imported user keeps: one a sign-in keeps
// (imageURL), or a path on the app's own origin ("/avatars/1.png"), which
// a next-auth app may have stored for its own pages to show; "" for
// anything else (over 2 KiB, not plain text, a data: URI or another
// scheme, a protocol-relative //host). Bounded as a sign-in bounds it:
// the image rides in a jwt session cookie.
func ImportedImage(s string) string {
	if imageURL(s) || appPath(s) {
		return s
	}
	return ""
}

// appPath: a path from the root of the app's own origin, of plain text and
// bounded length. Not "//host" nor "/\host", which browsers read as
// another host.
func appPath(s string) bool {
	if len(s) < 2 || len(s) > maxImageBytes || s[0] != '/' || s[1] == '/' || strings.ContainsRune(s, '\\') || !plainText(s) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == ""
}

// imageURL: an absolute http(s) URL of plain text and bounded length, what
// an app can put in an img src as it is.
func imageURL(s string) bool {
	if s == "" || len(s) > maxImageBytes || !plainText(s) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
