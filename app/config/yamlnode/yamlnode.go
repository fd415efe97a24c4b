// Package yamlnode works on a parsed YAML tree before it is decoded into
// a struct: the keys no field takes (an unknown key is a typo the operator
// should hear of, with its line), and ${VAR} references in values replaced
// from the environment. It knows nothing of latchkey's configuration.
package yamlnode

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// envRef is a ${VAR} reference to a portable environment variable name.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandEnv replaces ${VAR} in every value (not in keys). A plain scalar
// that changed is resolved again, so `port: ${PORT}` is still a number.
func ExpandEnv(n *yaml.Node, env func(key string) (string, bool)) {
	switch n.Kind {
	case yaml.ScalarNode:
		v := envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
			s, _ := env(m[2 : len(m)-1])
			return s
		})
		if v != n.Value {
			n.Value = v
			if n.Style == 0 {
				n.Tag = ""
			}
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			ExpandEnv(n.Content[i], env)
		}
	default:
		for _, c := range n.Content {
			ExpandEnv(c, env)
		}
	}
}

// unmarshalerType: a type that decodes itself has no fields to check.
var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// UnknownKeys lists every mapping key under n that no field of t (a
// struct, followed through pointers, slices and its fields' types) takes,
// with its line, as yaml's KnownFields would: a yaml.Node cannot decode
// with it, and decoding from the node is what lets ExpandEnv run first.
// section names the struct a key was found in, for the message.
func UnknownKeys(n *yaml.Node, t reflect.Type, section func(reflect.Type) string) []string {
	var p []string
	unknownKeys(n, t, section, &p)
	// A block merged in several places (<<: *anchor) is one text: its
	// typo is one line to fix, listed once.
	seen := make(map[string]bool, len(p))
	return slices.DeleteFunc(p, func(s string) bool {
		dup := seen[s]
		seen[s] = true
		return dup
	})
}

func unknownKeys(n *yaml.Node, t reflect.Type, section func(reflect.Type) string, p *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalerType):
		fields := map[string]reflect.Type{}
		yamlFields(t, fields)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Tag == "!!merge" {
				// The merged mappings' keys land in this struct as if
				// written here (yaml decodes them so), so they are
				// checked against it: a typo must not hide behind <<.
				for _, m := range mergedMaps(n.Content[i+1]) {
					unknownKeys(m, t, section, p)
				}
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				*p = append(*p, fmt.Sprintf("line %d: unknown key %q in %s", k.Line, k.Value, section(t)))
				continue
			}
			unknownKeys(n.Content[i+1], ft, section, p)
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for _, c := range n.Content {
			unknownKeys(c, t.Elem(), section, p)
		}
	}
}

// mergedMaps are the mappings a merge key's value names: one mapping or
// alias of one, or a sequence of them.
func mergedMaps(v *yaml.Node) []*yaml.Node {
	if v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return []*yaml.Node{v}
}

// yamlFields collects the keys of t's fields, an inline struct's included.
func yamlFields(t reflect.Type, fields map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case name == "" && opts == "inline" && f.Type.Kind() == reflect.Struct:
			yamlFields(f.Type, fields)
		case name != "":
			fields[name] = f.Type
		}
	}
}
