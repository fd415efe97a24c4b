package views

import (
	"context"
	"html"
	"io"

	"github.com/a-h/templ"

	"github.com/latchkey-auth/latchkey/app/i18n"
)

// bold is message id with the value of its placeholder key set in bold,
// wherever the language's word order puts it ("Signed in as <b>ann@…</b>.",
// "<b>ann@…</b> としてサインイン中").
func bold(l *i18n.Lang, id, key, value string, kv ...string) templ.Component {
	return boldHTML(l, id, key, html.EscapeString(value), kv...)
}

// boldHTML is bold for a value that is already HTML (escaped by the caller).
func boldHTML(l *i18n.Lang, id, key, valueHTML string, kv ...string) templ.Component {
	before, after := l.Split(id, key, kv...)
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, html.EscapeString(before)+"<strong>"+valueHTML+"</strong>"+html.EscapeString(after))
		return err
	})
}
