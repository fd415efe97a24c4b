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

// Render is src (YAML) as compact JSON, with every marked server URL and
// cookie name set to in's, in the source's key order. It fails on a marker
// it cannot fill, so a document naming a cookie the service lacks never
// starts.
func Render(src []byte, in Instance) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	if err := in.rewrite(&doc); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeJSON(&b, &doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// rewrite fills the marked objects below n.
func (in Instance) rewrite(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		if err := in.fill(n); err != nil {
			return err
		}
	}
	for _, c := range n.Content {
		if err := in.rewrite(c); err != nil {
			return err
		}
	}
	return nil
}

// fill sets a marked mapping's url (servers) or name (cookies).
func (in Instance) fill(m *yaml.Node) error {
	if role := value(m, serverMarker); role != nil {
		switch role.Value {
		case "base":
			return set(m, "url", in.BaseURL)
		case "origin":
			return set(m, "url", in.Origin)
		default:
			return fmt.Errorf("openapi: line %d: unknown %s %q", role.Line, serverMarker, role.Value)
		}
	}
	if role := value(m, cookieMarker); role != nil {
		name, ok := in.Cookies[role.Value]
		if !ok {
			return fmt.Errorf("openapi: line %d: no cookie for %s %q", role.Line, cookieMarker, role.Value)
		}
		return set(m, "name", name)
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

// set replaces the scalar under key in mapping m.
func set(m *yaml.Node, key, v string) error {
	n := value(m, key)
	if n == nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("openapi: line %d: marked object has no %s", m.Line, key)
	}
	n.Value, n.Tag, n.Style = v, "!!str", 0
	return nil
}

// writeJSON appends n as JSON, keeping mapping keys in source order.
func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("openapi: expected one document")
		}
		return writeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeScalar(b, n.Content[i].Value); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default: // a scalar: its YAML type (string, number, bool, null) decides
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("openapi: line %d: %w", n.Line, err)
		}
		return writeScalar(b, v)
	}
	return nil
}

// writeScalar appends v as JSON without escaping <, > and &.
func writeScalar(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}
