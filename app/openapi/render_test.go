package openapi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The JSON keeps the source's key order and YAML types, and only the marked
// values change; a marker the instance cannot fill is an error.
func TestRenderFillsMarkers(t *testing.T) {
	src := []byte(`
openapi: 3.1.0
servers:
  - {url: http://localhost:3000/api/auth, x-latchkey-server: base}
z: {n: 3, f: 1.5, yes: true, none: null, s: "<a & b>", q: "3"}
a:
  - {url: http://localhost:3000, x-latchkey-server: origin}
  - {name: next-auth.csrf-token, in: cookie, x-latchkey-cookie: csrf-token}
  - {name: untouched}
`)
	doc, err := compile(src, nil)
	require.NoError(t, err)
	in := Instance{BaseURL: "https://ex.com/idp", Origin: "https://ex.com", Cookies: map[string]string{"csrf-token": "__Host-authjs.csrf-token"}}
	out, err := doc.fill(in)
	require.NoError(t, err)
	require.Equal(t, `{"openapi":"3.1.0","servers":[{"url":"https://ex.com/idp","x-latchkey-server":"base"}],`+
		`"z":{"n":3,"f":1.5,"yes":true,"none":null,"s":"<a & b>","q":"3"},`+
		`"a":[{"url":"https://ex.com","x-latchkey-server":"origin"},`+
		`{"name":"__Host-authjs.csrf-token","in":"cookie","x-latchkey-cookie":"csrf-token"},{"name":"untouched"}]}`, string(out))

	again, err := doc.fill(Instance{BaseURL: "b<&>", Origin: "o", Cookies: in.Cookies})
	require.NoError(t, err)
	require.Contains(t, string(again), `"url":"b<&>"`, "filling leaves the document as it was; values are JSON strings")
	require.Contains(t, string(out), `"url":"https://ex.com/idp"`, "an earlier answer is not changed by a later fill")

	_, err = doc.fill(Instance{})
	require.ErrorContains(t, err, `line 8: no cookie for x-latchkey-cookie "csrf-token"`)
	_, err = compile([]byte(`servers: [{url: x, x-latchkey-server: elsewhere}]`), nil)
	require.ErrorContains(t, err, `unknown x-latchkey-server "elsewhere"`)
	_, err = compile([]byte(`servers: [{x-latchkey-server: base}]`), nil)
	require.ErrorContains(t, err, "marked object has no url")
	_, err = Render(in)
	require.ErrorContains(t, err, "no cookie for", "the embedded document names every cookie role")
}

// A path item marked x-latchkey-feature is in the document only when the
// instance serves that feature.
func TestRenderDropsFeaturesOff(t *testing.T) {
	src := []byte(`
paths:
  /a: {get: {}}
  /b: {x-latchkey-feature: two-factor, get: {}}
  /c: {get: {}}
`)
	off, err := compile(src, nil)
	require.NoError(t, err)
	out, err := off.fill(Instance{})
	require.NoError(t, err)
	require.Equal(t, `{"paths":{"/a":{"get":{}},"/c":{"get":{}}}}`, string(out))
	on, err := compile(src, map[string]bool{"two-factor": true})
	require.NoError(t, err)
	out, err = on.fill(Instance{})
	require.NoError(t, err)
	require.Equal(t, `{"paths":{"/a":{"get":{}},"/b":{"x-latchkey-feature":"two-factor","get":{}},"/c":{"get":{}}}}`, string(out))
}
