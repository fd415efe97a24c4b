package yamlnode

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

type inner struct {
	Name string `yaml:"name"`
}

type outer struct {
	Port  int     `yaml:"port"`
	Items []inner `yaml:"items"`
	Embed struct {
		Deep string `yaml:"deep"`
	} `yaml:",inline"`
	Skipped string `yaml:"-"`
}

func parse(t *testing.T, doc string) *yaml.Node {
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(doc), &n))
	return n.Content[0]
}

// Every unknown key is listed with its line and section, in lists and
// through inline structs alike; known keys and merges pass.
func TestUnknownKeys(t *testing.T) {
	root := parse(t, "port: 1\ndeep: x\nitems:\n  - name: a\n    nmae: b\nSkipped: y\n")
	got := UnknownKeys(root, reflect.TypeOf(outer{}), func(t reflect.Type) string { return t.Name() })
	require.Equal(t, []string{`line 5: unknown key "nmae" in inner`, `line 6: unknown key "Skipped" in outer`}, got)
	require.Empty(t, UnknownKeys(parse(t, "base: &b {name: a}\nitems: [{<<: *b}]\n"), reflect.TypeOf(struct {
		Base  inner   `yaml:"base"`
		Items []inner `yaml:"items"`
	}{}), nil))
}

// ${VAR} is replaced in values only; a plain scalar is typed again, a
// quoted one stays a string.
func TestExpandEnv(t *testing.T) {
	env := func(k string) (string, bool) { v, ok := map[string]string{"P": "8080", "K": "key"}[k]; return v, ok }
	root := parse(t, "port: ${P}\nq: \"${P}\"\n${K}: ${UNSET}x\n")
	ExpandEnv(root, env)
	var got map[string]any
	require.NoError(t, root.Decode(&got))
	require.Equal(t, map[string]any{"port": 8080, "q": "8080", "${K}": "x"}, got)
}
