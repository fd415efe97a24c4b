package cookies

import "net/http"

// Track wraps every response in a tracker that remembers where each cookie's
// Set-Cookie line is, so Writer replaces an earlier line of the same name in
// constant time instead of scanning every line the response already has.
// Without it Writer still answers one line per name, by scanning: fine for
// the few cookies of a test, quadratic for a response setting many.
func Track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&Tracker{ResponseWriter: w}, r)
	})
}

// Tracker is one response's index of Set-Cookie lines by cookie name: what
// Track puts around a response, for a server that wraps responses itself.
// Reset it onto a response and serve through it; once the response is
// done it may be Reset onto another (a server can pool them).
type Tracker struct {
	http.ResponseWriter
	pos map[string]int // cookie name → index in Header()["Set-Cookie"]
	// first and n identify the slice pos describes: when anything else
	// edits the Set-Cookie lines (a new slice, an append, a Del), they no
	// longer match and the index is rebuilt once. An edit in place is seen
	// when the name it overwrote is next looked up.
	first *string
	n     int
}

// Unwrap lets http.ResponseController and Writer see through the tracker.
func (t *Tracker) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// trackerOf finds the tracker under rw, through wrappers that Unwrap (echo's
// Response does), or nil.
func trackerOf(rw http.ResponseWriter) *Tracker {
	for {
		switch w := rw.(type) {
		case *Tracker:
			return w
		case interface{ Unwrap() http.ResponseWriter }:
			rw = w.Unwrap()
		default:
			return nil
		}
	}
}

// find returns the index of name's line in lines, if it has one.
func (t *Tracker) find(lines []string, name string) (int, bool) {
	if !t.describes(lines) {
		t.rebuild(lines)
	}
	i, ok := t.pos[name]
	if ok && lineName(lines[i]) != name { // a line was edited in place
		t.rebuild(lines)
		i, ok = t.pos[name]
	}
	return i, ok
}

// rebuild indexes lines from scratch, once per edit made by someone else.
// A name with several lines (a domain cookie and its host-only twin being
// cleared) is indexed at its first, the line scan finds too.
func (t *Tracker) rebuild(lines []string) {
	t.pos = make(map[string]int, len(lines))
	for i, l := range lines {
		if n := lineName(l); !t.has(n) {
			t.pos[n] = i
		}
	}
	t.remember(lines)
}

func (t *Tracker) has(name string) bool {
	_, ok := t.pos[name]
	return ok
}

// put records that lines[i] is name's line.
func (t *Tracker) put(lines []string, name string, i int) {
	if t.pos == nil {
		t.pos = make(map[string]int)
	}
	t.pos[name] = i
	t.remember(lines)
}

func (t *Tracker) remember(lines []string) {
	t.first, t.n = nil, len(lines)
	if len(lines) > 0 {
		t.first = &lines[0]
	}
}

func (t *Tracker) describes(lines []string) bool {
	if len(lines) != t.n {
		return false
	}
	return len(lines) == 0 || &lines[0] == t.first
}

// Reset makes t track the response w, forgetting the one before.
func (t *Tracker) Reset(w http.ResponseWriter) {
	t.ResponseWriter = w
	if len(t.pos) > 4*indexFrom {
		t.pos = nil // a map grown by a response with many cookies is not kept
	} else {
		clear(t.pos)
	}
	t.first, t.n = nil, 0
}

// indexFrom is the number of Set-Cookie lines from which the tracker keeps
// its index: below it a scan of the lines is cheaper than the map, and a
// typical response (a CSRF cookie, a callback URL, a session) never
// allocates one.
const indexFrom = 8
