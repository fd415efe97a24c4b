package cookies

import (
	"net/http"
	"strings"
	"time"
)

// Pair is the Set-Cookie line of a browser-session cookie whose value is
// two parts joined by a separator, "token|hash" (the CSRF cookie), with
// the Writer's attributes: everything but the parts is encoded once, when
// prepared, so a line for new parts is one allocation. A first visit's
// GET /session sets one.
type Pair struct {
	w                   Writer
	name                string
	sep                 byte
	prefix, esc, suffix string // "name=", Encode(sep), the attributes
	prepared            bool   // false: a name or path that Writer.line handles itself
}

// PreparePair prepares name's lines for values a + string(sep) + b.
func (w Writer) PreparePair(name string, sep byte) Pair {
	p := Pair{w: w, name: name, sep: sep}
	line := w.line(name, "", time.Time{}, 0)
	if rest, ok := strings.CutPrefix(line, name+"="); ok && validPath(w.path()) {
		p.prefix, p.esc, p.suffix, p.prepared = name+"=", Encode(string(sep)), rest, true
	}
	return p
}

// Set writes name=Encode(a + sep + b), as Writer.Set would, and returns a
// as a string. When neither part needs escaping (hex, as CSRF tokens and
// hashes are) the line is the one allocation and the string returned is
// the part of it that holds a.
func (p Pair) Set(rw http.ResponseWriter, a, b []byte) string {
	if !p.prepared || !allUnreserved(a) || !allUnreserved(b) {
		s := string(a)
		p.w.Set(rw, p.name, s+string(p.sep)+string(b), time.Time{}, 0)
		return s
	}
	var line strings.Builder
	line.Grow(len(p.prefix) + len(a) + len(p.esc) + len(b) + len(p.suffix))
	line.WriteString(p.prefix)
	line.Write(a)
	line.WriteString(p.esc)
	line.Write(b)
	line.WriteString(p.suffix)
	s := line.String()
	setOnce(rw, p.name, s)
	return s[len(p.prefix) : len(p.prefix)+len(a)]
}

// allUnreserved reports whether Encode leaves v as it is.
func allUnreserved(v []byte) bool {
	for _, c := range v {
		if !unreserved(c) {
			return false
		}
	}
	return true
}
