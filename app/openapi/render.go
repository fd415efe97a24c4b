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
}

// Markers in the source: the object whose url or name is the instance's.
const (
	serverMarker = "x-latchkey-server" // on a Server Object: "base" or "origin"
	cookieMarker = "x-latchkey-cookie" // on a cookie Parameter or apiKey scheme: a role of Instance.Cookies
)

// Render is the embedded document as compact JSON, with every marked
// server URL and cookie name set to in's, in the source's key order. It
// fails on a marker it cannot fill, so a document naming a cookie the
// service lacks never starts.
func Render(in Instance) ([]byte, error) {
	doc, err := parsed()
	if err != nil {
		return nil, err
	}
	return render(doc, in)
}

// parsed is Source parsed, once per process: parsing takes milliseconds and
// every App (tests start hundreds) renders the same tree, which render only
// reads.
var parsed = sync.OnceValues(func() (*yaml.Node, error) { return parse(Source) })

func parse(src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	return &doc, nil
}

// render writes doc as JSON with in's values in place of the marked ones.
func render(doc *yaml.Node, in Instance) ([]byte, error) {
	w := newJSONWriter()
	if err := in.collect(doc, w.replace); err != nil {
		return nil, err
	}
	if err := w.node(doc); err != nil {
		return nil, err
	}
	return w.b.Bytes(), nil
}

// collect records below n the scalar nodes the instance's values replace.
func (in Instance) collect(n *yaml.Node, replace map[*yaml.Node]string) error {
	if n.Kind == yaml.MappingNode {
		if err := in.fill(n, replace); err != nil {
			return err
		}
	}
	for _, c := range n.Content {
		if err := in.collect(c, replace); err != nil {
			return err
		}
	}
	return nil
}

// fill records a marked mapping's url (servers) or name (cookies).
func (in Instance) fill(m *yaml.Node, replace map[*yaml.Node]string) error {
	if role := value(m, serverMarker); role != nil {
		switch role.Value {
		case "base":
			return set(m, "url", in.BaseURL, replace)
		case "origin":
			return set(m, "url", in.Origin, replace)
		default:
			return fmt.Errorf("openapi: line %d: unknown %s %q", role.Line, serverMarker, role.Value)
		}
	}
	if role := value(m, cookieMarker); role != nil {
		name, ok := in.Cookies[role.Value]
		if !ok {
			return fmt.Errorf("openapi: line %d: no cookie for %s %q", role.Line, cookieMarker, role.Value)
		}
		return set(m, "name", name, replace)
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

// set records v in place of the scalar under key in mapping m.
func set(m *yaml.Node, key, v string, replace map[*yaml.Node]string) error {
	n := value(m, key)
	if n == nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("openapi: line %d: marked object has no %s", m.Line, key)
	}
	replace[n] = v
	return nil
}

// jsonWriter writes YAML nodes as JSON into one buffer through one
// encoder (without escaping <, > and &, which the descriptions use).
type jsonWriter struct {
	b       bytes.Buffer
	enc     *json.Encoder
	replace map[*yaml.Node]string // scalars written as these strings instead
}

func newJSONWriter() *jsonWriter {
	w := &jsonWriter{replace: map[*yaml.Node]string{}}
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
		if v, ok := w.replace[n]; ok {
			return w.scalar(v)
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
