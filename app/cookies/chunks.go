package cookies

import (
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ChunkSize is next-auth v4's value budget per cookie (4096 − 163).
const ChunkSize = 4096 - 163

// maxChunk is the highest chunk index read or cleared: 65 chunks of
// ChunkSize are 255 KB, far more than a browser keeps for one site. Bounding
// the names keeps a request full of look-alike cookies from costing more than
// a real chunked session.
const maxChunk = 64

// ReadChunked joins a session cookie that may be split as name, name.0, name.1, ...
// ordered by the numeric suffix, as next-auth's SessionStore reads it.
func ReadChunked(r *http.Request, name string) string {
	type part struct {
		n int
		v string
	}
	// The usual request has one part or none: only a second one allocates.
	var first part
	var parts []part
	found := 0
	s := newScanner(r)
	for {
		cookie, raw, ok := s.nextRaw()
		if !ok {
			break
		}
		n, ok := chunkIndex(cookie, name)
		if !ok {
			continue // whether another cookie is well formed changes nothing here
		}
		value, ok := wellFormed(cookie, raw)
		if !ok {
			continue
		}
		if found++; found == 1 {
			first = part{n, value}
			continue
		}
		if parts == nil {
			parts = append(parts, first)
		}
		parts = append(parts, part{n, value})
	}
	if found <= 1 {
		return first.v
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].n < parts[j].n })
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.v)
	}
	return b.String()
}

// chunkIndex tells whether cookie is name (index -1) or one of its chunks
// name.0 ... name.64, spelled the way SetChunked writes them (no sign, no
// leading zero), so reading and clearing agree on one bounded set of names.
func chunkIndex(cookie, name string) (int, bool) {
	rest, ok := strings.CutPrefix(cookie, name)
	if !ok {
		return 0, false
	}
	if rest == "" {
		return -1, true
	}
	digits, ok := strings.CutPrefix(rest, ".")
	if !ok || digits == "" || len(digits) > 2 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
		n = n*10 + int(digits[i]-'0')
	}
	return n, n <= maxChunk
}

// chunkNames lists the session cookie and its chunks present on the request,
// each once: at most maxChunk+2 names, whatever the request carries.
func chunkNames(r *http.Request, name string) []string {
	var seen [maxChunk + 2]bool // by index+1: seen[0] is name itself
	var names []string
	s := newScanner(r)
	for {
		cookie, _, ok := s.next()
		if !ok {
			return names
		}
		n, ok := chunkIndex(cookie, name)
		if !ok || seen[n+1] {
			continue
		}
		seen[n+1] = true
		names = append(names, cookie)
	}
}

// SetChunked writes value under name, split into name.0, name.1, ... when it
// exceeds ChunkSize, after clearing every chunk the request carried that the
// new set does not overwrite. With a Domain it also clears the host-only
// cookies of the names the request carried (see clearHostOnly).
func (w Writer) SetChunked(rw http.ResponseWriter, r *http.Request, name, value string, expires time.Time) {
	var names []string
	if len(value) <= ChunkSize {
		names = []string{name}
	} else {
		for i := 0; i*ChunkSize < len(value); i++ {
			names = append(names, name+"."+strconv.Itoa(i))
		}
	}
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
	}
	sent := chunkNames(r, name)
	for _, old := range sent {
		if !keep[old] {
			w.Clear(rw, old)
		}
	}
	for i, n := range names {
		end := min((i+1)*ChunkSize, len(value))
		w.Set(rw, n, value[i*ChunkSize:end], expires, 0)
	}
	w.clearHostOnly(rw, sent)
}

// ClearChunked clears the session cookie and every chunk the request
// carried, and with a Domain their host-only cookies too (clearHostOnly).
func (w Writer) ClearChunked(rw http.ResponseWriter, r *http.Request, name string) {
	names := chunkNames(r, name)
	if len(names) == 0 {
		names = []string{name}
	}
	for _, n := range names {
		w.Clear(rw, n)
	}
	w.clearHostOnly(rw, names)
}

// clearHostOnly clears, when the Writer has a Domain, the host-only
// cookies of names, which the request carried: a browser that signed in
// before cookies.domain was set holds one, and sends it first beside the
// domain cookie of the same name. Left alone it would outlive every
// sign-out and shadow the next session, or (a session read in chunks)
// be joined with the domain cookie into junk; nothing writes host-only
// session cookies any more, so clearing one loses nothing. Each line is
// added once per response, after the domain ones, so setOnce (and the
// tracker's index, which keeps a name's first line) keeps finding those.
func (w Writer) clearHostOnly(rw http.ResponseWriter, names []string) {
	if w.Domain == "" || len(names) == 0 {
		return
	}
	hostOnly := w
	hostOnly.Domain = ""
	h := rw.Header()
	for _, n := range names {
		// Once per response: a sign-in clears the session it replaces,
		// then writes its own.
		if line := hostOnly.line(n, "", time.Time{}, -1); line != "" && !slices.Contains(h["Set-Cookie"], line) {
			h["Set-Cookie"] = append(h["Set-Cookie"], line)
		}
	}
}
