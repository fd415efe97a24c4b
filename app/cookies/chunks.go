package cookies

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ChunkSize is next-auth v4's value budget per cookie (4096 − 163).
const ChunkSize = 4096 - 163

// ReadChunked joins a session cookie that may be split as name, name.0, name.1, ...
// ordered by the numeric suffix, as next-auth's SessionStore reads it.
func ReadChunked(r *http.Request, name string) string {
	type part struct {
		n int
		v string
	}
	var parts []part
	for _, c := range r.Cookies() {
		if c.Name == name {
			parts = append(parts, part{-1, c.Value})
			continue
		}
		suffix, ok := strings.CutPrefix(c.Name, name+".")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(suffix)
		if err != nil || n < 0 || n > 64 {
			continue
		}
		parts = append(parts, part{n, c.Value})
	}
	if len(parts) == 1 {
		return parts[0].v
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].n < parts[j].n })
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.v)
	}
	return b.String()
}

// chunkNames lists the session cookie and its chunks present on the request.
func chunkNames(r *http.Request, name string) []string {
	var names []string
	for _, c := range r.Cookies() {
		if c.Name == name || strings.HasPrefix(c.Name, name+".") {
			names = append(names, c.Name)
		}
	}
	return names
}

// SetChunked writes value under name, split into name.0, name.1, ... when it
// exceeds ChunkSize, after clearing every chunk the request carried that the
// new set does not overwrite.
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
	for _, old := range chunkNames(r, name) {
		if !keep[old] {
			w.Clear(rw, old)
		}
	}
	for i, n := range names {
		end := min((i+1)*ChunkSize, len(value))
		w.Set(rw, n, value[i*ChunkSize:end], expires, 0)
	}
}

// ClearChunked clears the session cookie and every chunk the request carried.
func (w Writer) ClearChunked(rw http.ResponseWriter, r *http.Request, name string) {
	names := chunkNames(r, name)
	if len(names) == 0 {
		names = []string{name}
	}
	for _, n := range names {
		w.Clear(rw, n)
	}
}
