package i18n

import (
	"context"
	"fmt"
	"strings"
)

// Lang is one offered language: its tag, its writing direction and its
// messages. A nil *Lang answers every message with its id, so a view
// rendered without a language shows which message is missing.
type Lang struct {
	tag   string
	name  string
	rtl   bool
	msgs  map[string]string // id → message with marks (renderAll)
	names []string          // the catalogue's placeholder names, which the marks index
}

func newLang(tag string, msgs map[string]string, names []string) (*Lang, error) {
	l := &Lang{tag: tag, msgs: msgs, names: names}
	l.name = l.T("LanguageName")
	switch dir := l.T("Direction"); dir {
	case "ltr":
	case "rtl":
		l.rtl = true
	default:
		return nil, fmt.Errorf("i18n: %s.toml: Direction is %q, want ltr or rtl", tag, dir)
	}
	return l, nil
}

// Tag is the BCP 47 tag, for <html lang>.
func (l *Lang) Tag() string {
	if l == nil {
		return Source
	}
	return l.tag
}

// Name is the language's own name ("Deutsch").
func (l *Lang) Name() string {
	if l == nil {
		return Source
	}
	return l.name
}

// Dir is the writing direction, for <html dir>: "ltr" or "rtl".
func (l *Lang) Dir() string {
	if l != nil && l.rtl {
		return "rtl"
	}
	return "ltr"
}

// T is the message id in this language (in English when this catalogue
// lacks it), its placeholders filled from kv, which alternates names and
// values: T("SignInWith", "Provider", "GitHub"). Values are plain text;
// the views escape the result.
func (l *Lang) T(id string, kv ...string) string {
	if l == nil {
		return id
	}
	m, ok := l.msgs[id]
	if !ok {
		return id
	}
	return fill(m, l.names, kv)
}

// hole marks where a value goes in Split: a byte no message contains.
const hole = "\x00"

// Split is the message id with the placeholder named key cut out: the text
// before and after it, so a view can set the value apart (in bold) in
// whatever place the language's word order puts it.
func (l *Lang) Split(id, key string, kv ...string) (before, after string) {
	s := l.T(id, append(kv, key, hole)...)
	before, after, _ = strings.Cut(s, hole)
	return before, after
}

type ctxKey struct{}

// NewContext carries l to code that renders an e-mail behind an interface
// that only passes a context (the sign-in core's SendLink).
func NewContext(ctx context.Context, l *Lang) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// FromContext is the language NewContext stored, or nil.
func FromContext(ctx context.Context) *Lang {
	l, _ := ctx.Value(ctxKey{}).(*Lang)
	return l
}
