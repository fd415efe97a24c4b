// Package openapi holds the OpenAPI 3.1 description of latchkey's HTTP API
// (openapi.yaml, the source, embedded) and renders it as JSON for one
// running instance: its server URLs and cookie names. app/openapi_test.go
// holds the document to the routes and to real responses.
package openapi

import (
	"bytes"
	_ "embed" // the document
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Source is openapi.yaml as written in the repository.
//
//go:embed openapi.yaml
var Source []byte

// Instance is what the served copy says about the running service.
type Instance struct {
	BaseURL string            // the base URL (SERVICE_URL): the servers of the paths below it
	Origin  string            // the root of the listener: the servers of operator and forward-auth paths
	Cookies map[string]string // cookie role (x-latchkey-cookie) → the instance's cookie name
	// Features are the optional features this instance serves (e.g.
	// "two-factor"): a path item marked x-latchkey-feature is in the
	// document only when its feature is on here, as its routes are.
	Features map[string]bool
}

// Markers in the source: the object whose url or name is the instance's.
const (
	serverMarker  = "x-latchkey-server"  // on a Server Object: "base" or "origin"
	cookieMarker  = "x-latchkey-cookie"  // on a cookie Parameter or apiKey scheme: a role of Instance.Cookies
	featureMarker = "x-latchkey-feature" // on a Path Item: served only with that feature on (Instance.Features)
)

// Render is the embedded document as compact JSON, with every marked
// server URL and cookie name set to in's, in the source's key order. It
// fails on a marker it cannot fill, so a document naming a cookie the
// service lacks never starts.
func Render(in Instance) ([]byte, error) {
	d, err := compiled(in.Features)
	if err != nil {
		return nil, err
	}
	return d.fill(in)
}

// compiled is Source rendered once per process and set of features with
// its marked values cut out: parsing and rendering take milliseconds and
// every App (tests start hundreds) needs the same JSON. Only the JSON is
// kept, not the parsed tree (about 700 KB in some 16,000 objects), which a
// running service would otherwise carry as live heap that every garbage
// collection marks.
func compiled(features map[string]bool) (*document, error) {
	var on []string
	for f, ok := range features {
		if ok {
			on = append(on, f)
		}
	}
	slices.Sort(on)
	key := strings.Join(on, ",")
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if d, ok := compiledDocs[key]; ok {
		return d, nil
	}
	d, err := compile(Source, features)
	if err != nil {
		return nil, err
	}
	compiledDocs[key] = d
	return d, nil
}

var (
	compiledMu   sync.Mutex
	compiledDocs = map[string]*document{}
)

// document is the rendered JSON around its holes: parts[i] comes before
// holes[i], the last part after the last hole.
type document struct {
	parts []string
	holes []hole
}

// hole is a marked scalar: the marker and role that name its value.
type hole struct {
	marker, role string
	line         int // of the marked object in the source, for errors
}

// compile parses src and renders it with the marked scalars left as holes,
// without the path items of features not on.
func compile(src []byte, features map[string]bool) (*document, error) {
	tree, err := parse(src)
	if err != nil {
		return nil, err
	}
	if err := dropFeatures(tree, features); err != nil {
		return nil, err
	}
	w := newJSONWriter()
	if err := collect(tree, w.holes); err != nil {
		return nil, err
	}
	if err := w.node(tree); err != nil {
		return nil, err
	}
	return w.document(), nil
}

func parse(src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	return &doc, nil
}

// dropFeatures removes from the document's paths every path item whose
// x-latchkey-feature is not on.
func dropFeatures(doc *yaml.Node, features map[string]bool) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return fmt.Errorf("openapi: expected one document")
	}
	paths := value(doc.Content[0], "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		return nil
	}
	kept := paths.Content[:0:0]
	for i := 0; i+1 < len(paths.Content); i += 2 {
		if f := value(paths.Content[i+1], featureMarker); f != nil && !features[f.Value] {
			continue
		}
		kept = append(kept, paths.Content[i], paths.Content[i+1])
	}
	paths.Content = kept
	return nil
}

// fill is the document with in's values in its holes.
func (d *document) fill(in Instance) ([]byte, error) {
	w := newJSONWriter()
	for i, h := range d.holes {
		w.b.WriteString(d.parts[i])
		v, err := in.value(h)
		if err != nil {
			return nil, err
		}
		if err := w.scalar(v); err != nil {
			return nil, err
		}
	}
	w.b.WriteString(d.parts[len(d.holes)])
	return w.b.Bytes(), nil
}

// value is what in puts in hole h.
func (in Instance) value(h hole) (string, error) {
	switch {
	case h.marker == serverMarker && h.role == "base":
		return in.BaseURL, nil
	case h.marker == serverMarker && h.role == "origin":
		return in.Origin, nil
	case h.marker == cookieMarker:
		if name, ok := in.Cookies[h.role]; ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("openapi: line %d: no cookie for %s %q", h.line, h.marker, h.role)
}

// collect records below n the scalar nodes that are holes.
func collect(n *yaml.Node, holes map[*yaml.Node]hole) error {
	if n.Kind == yaml.MappingNode {
		if err := mark(n, holes); err != nil {
			return err
		}
	}
	for _, c := range n.Content {
		if err := collect(c, holes); err != nil {
			return err
		}
	}
	return nil
}

// mark records a marked mapping's url (servers) or name (cookies) as a
// hole; a server role other than base or origin is an error.
func mark(m *yaml.Node, holes map[*yaml.Node]hole) error {
	if role := value(m, serverMarker); role != nil {
		if role.Value != "base" && role.Value != "origin" {
			return fmt.Errorf("openapi: line %d: unknown %s %q", role.Line, serverMarker, role.Value)
		}
		return set(m, "url", hole{serverMarker, role.Value, m.Line}, holes)
	}
	if role := value(m, cookieMarker); role != nil {
		return set(m, "name", hole{cookieMarker, role.Value, m.Line}, holes)
	}
	return nil
}

// value is the value node of key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set records the scalar under key in mapping m as hole h.
func set(m *yaml.Node, key string, h hole, holes map[*yaml.Node]hole) error {
	n := value(m, key)
	if n == nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("openapi: line %d: marked object has no %s", m.Line, key)
	}
	holes[n] = h
	return nil
}

// jsonWriter writes YAML nodes as JSON into one buffer through one
// encoder (without escaping <, > and &, which the descriptions use).
type jsonWriter struct {
	b     bytes.Buffer
	enc   *json.Encoder
	holes map[*yaml.Node]hole // scalars left out
	cuts  []cut               // where they were left out
}

// cut is a hole at an offset of the buffer.
type cut struct {
	at int
	h  hole
}

func newJSONWriter() *jsonWriter {
	w := &jsonWriter{holes: map[*yaml.Node]hole{}}
	w.enc = json.NewEncoder(&w.b)
	w.enc.SetEscapeHTML(false)
	return w
}

// node appends n as JSON, keeping mapping keys in source order.
func (w *jsonWriter) node(n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("openapi: expected one document")
		}
		return w.node(n.Content[0])
	case yaml.AliasNode:
		return w.node(n.Alias)
	case yaml.MappingNode:
		w.b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				w.b.WriteByte(',')
			}
			if err := w.scalar(n.Content[i].Value); err != nil {
				return err
			}
			w.b.WriteByte(':')
			if err := w.node(n.Content[i+1]); err != nil {
				return err
			}
		}
		w.b.WriteByte('}')
	case yaml.SequenceNode:
		w.b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				w.b.WriteByte(',')
			}
			if err := w.node(c); err != nil {
				return err
			}
		}
		w.b.WriteByte(']')
	default: // a scalar: its YAML type (string, number, bool, null) decides
		if h, ok := w.holes[n]; ok {
			w.cuts = append(w.cuts, cut{w.b.Len(), h})
			return nil
		}
		if n.ShortTag() == "!!str" {
			return w.scalar(n.Value)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("openapi: line %d: %w", n.Line, err)
		}
		return w.scalar(v)
	}
	return nil
}

// scalar appends v as JSON.
func (w *jsonWriter) scalar(v any) error {
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	w.b.Truncate(w.b.Len() - 1) // Encode's newline
	return nil
}

// document is what was written, split at the cuts.
func (w *jsonWriter) document() *document {
	out := w.b.String()
	d := &document{parts: make([]string, 0, len(w.cuts)+1), holes: make([]hole, 0, len(w.cuts))}
	from := 0
	for _, c := range w.cuts {
		d.parts = append(d.parts, out[from:c.at])
		d.holes = append(d.holes, c.h)
		from = c.at
	}
	d.parts = append(d.parts, out[from:])
	return d
}
