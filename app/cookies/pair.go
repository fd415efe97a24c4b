package cookies

import (
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// HexPair is the Set-Cookie line of a browser-session cookie whose value
// is two binary values in hex joined by a separator, "token|hash" (the
// CSRF cookie), with the Writer's attributes. Everything but the values is
// encoded once, when prepared, and hex needs no escaping, so a line is
// built without looking at its bytes, in one allocation: a first visit's
// GET /session sets one.
type HexPair struct {
	w                   Writer
	name                string
	sep                 byte
	prefix, esc, suffix string // "name=", Encode(sep), the attributes
	prepared            bool   // false: a name or path that Writer.line handles itself
}

// PrepareHexPair prepares name's lines for values hex(a) + string(sep) + hex(b).
func (w Writer) PrepareHexPair(name string, sep byte) HexPair {
	p := HexPair{w: w, name: name, sep: sep}
	line := w.line(name, "", time.Time{}, 0)
	if rest, ok := strings.CutPrefix(line, name+"="); ok && validPath(w.path()) {
		p.prefix, p.esc, p.suffix, p.prepared = name+"=", Encode(string(sep)), rest, true
	}
	return p
}

// Set writes name=Encode(hex(a) + sep + hex(b)), as Writer.Set would, and
// returns hex(a), a piece of the line.
func (p HexPair) Set(rw http.ResponseWriter, a, b []byte) string {
	var buf [128]byte // a CSRF cookie's two hex halves; longer values make append allocate
	ha := hex.AppendEncode(buf[:0], a)
	hb := hex.AppendEncode(ha[len(ha):], b)
	if !p.prepared {
		s := string(ha)
		p.w.Set(rw, p.name, s+string(p.sep)+string(hb), time.Time{}, 0)
		return s
	}
	var line strings.Builder
	line.Grow(len(p.prefix) + len(ha) + len(p.esc) + len(hb) + len(p.suffix))
	line.WriteString(p.prefix)
	line.Write(ha)
	line.WriteString(p.esc)
	line.Write(hb)
	line.WriteString(p.suffix)
	s := line.String()
	setOnce(rw, p.name, s)
	return s[len(p.prefix) : len(p.prefix)+len(ha)]
}
