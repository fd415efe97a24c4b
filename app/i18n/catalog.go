// Package i18n chooses the language of a page and looks its messages up in
// the catalogues (views/locales/<tag>.toml), through go-i18n for the
// catalogues and golang.org/x/text/language for matching a browser's
// languages to the ones latchkey has.
package i18n

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// Source is the language every catalogue is translated from: it must
// hold every message, and a message missing elsewhere falls back to it.
const Source = "en"

// Catalog is the set of languages an instance offers, its default first.
type Catalog struct {
	langs   []*Lang
	bases   []language.Base // langs' base languages, for match
	matcher language.Matcher
	// def and allowed are Load's arguments, for LoadedFor.
	def     string
	allowed []string
}

// Load reads every <tag>.toml in fsys and keeps the languages allowed
// (all of them when allowed is empty), def first (def "": the first
// allowed one, else Source). A catalogue that does not
// parse, a tag without a catalogue, or a default outside the allowed list
// is an error: the service does not start with a half-read language.
func Load(fsys fs.FS, def string, allowed []string) (*Catalog, error) {
	c := &Catalog{def: def, allowed: slices.Clone(allowed)}
	bundle := goi18n.NewBundle(language.Make(Source))
	bundle.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	shipped, files, err := loadFiles(bundle, fsys)
	if err != nil {
		return nil, err
	}
	if _, ok := shipped[Source]; !ok {
		return nil, fmt.Errorf("i18n: no %s.toml, the source catalogue", Source)
	}
	switch {
	case def != "":
	case len(allowed) > 0:
		def = allowed[0]
	default:
		def = Source
	}
	if len(allowed) == 0 {
		allowed = sortedKeys(shipped)
	}
	var tags []string
	for _, t := range allowed {
		canon, ok := findTag(shipped, t)
		if !ok {
			return nil, fmt.Errorf("i18n.languages: %q has no catalogue (shipped: %s)", t, strings.Join(sortedKeys(shipped), " "))
		}
		if !slices.Contains(tags, canon) {
			tags = append(tags, canon)
		}
	}
	defTag, ok := findTag(shipped, def)
	if !ok || !slices.Contains(tags, defTag) {
		return nil, fmt.Errorf("i18n.default: %q is not one of the languages offered (%s)", def, strings.Join(tags, " "))
	}
	tags = append([]string{defTag}, slices.DeleteFunc(tags, func(t string) bool { return t == defTag })...)
	names, err := placeholderNames(files)
	if err != nil {
		return nil, err
	}
	ids := messageIDs(files)
	matchable := make([]language.Tag, len(tags))
	for i, t := range tags {
		msgs, err := renderAll(bundle, t, ids, names)
		if err != nil {
			return nil, err
		}
		l, err := newLang(t, msgs, names)
		if err != nil {
			return nil, err
		}
		c.langs = append(c.langs, l)
		matchable[i] = language.Make(t)
		base, _ := matchable[i].Base()
		c.bases = append(c.bases, base)
	}
	c.matcher = language.NewMatcher(matchable)
	return c, nil
}

// loadFiles parses every catalogue into the bundle: the tags as the
// files name them (pt-BR.toml → "pt-BR") and the parsed files.
func loadFiles(bundle *goi18n.Bundle, fsys fs.FS) (map[string]bool, []*goi18n.MessageFile, error) {
	paths, err := fs.Glob(fsys, "*.toml")
	if err != nil {
		return nil, nil, fmt.Errorf("i18n: list catalogues: %w", err)
	}
	shipped := map[string]bool{}
	var files []*goi18n.MessageFile
	for _, p := range paths {
		tag := strings.TrimSuffix(path.Base(p), ".toml")
		if _, err := language.Parse(tag); err != nil {
			return nil, nil, fmt.Errorf("i18n: %s: the file name is not a language tag: %w", p, err)
		}
		buf, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, nil, fmt.Errorf("i18n: read %s: %w", p, err)
		}
		f, err := bundle.ParseMessageFileBytes(buf, p)
		if err != nil {
			return nil, nil, fmt.Errorf("i18n: parse %s: %w", p, err)
		}
		shipped[tag] = true
		files = append(files, f)
	}
	return shipped, files, nil
}

// findTag is the shipped tag that names the same language as t (any case:
// "pt-br" is "pt-BR").
func findTag(shipped map[string]bool, t string) (string, bool) {
	want, err := language.Parse(t)
	if err != nil {
		return "", false
	}
	for s := range shipped {
		if language.Make(s) == want {
			return s, true
		}
	}
	return "", false
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LoadedFor reports whether c was loaded for these i18n settings (Load's
// def and allowed; nil and empty alike): a catalogue loaded once and
// handed to several instances (app.Options.Langs) must be the one their
// config asks for.
func (c *Catalog) LoadedFor(def string, allowed []string) bool {
	return c.def == def && slices.Equal(c.allowed, allowed)
}

// Languages are the offered tags, the default first.
func (c *Catalog) Languages() []string {
	tags := make([]string, len(c.langs))
	for i, l := range c.langs {
		tags[i] = l.tag
	}
	return tags
}

// Langs are the offered languages, the default first.
func (c *Catalog) Langs() []*Lang { return c.langs }

// Default is the configured default language.
func (c *Catalog) Default() *Lang { return c.langs[0] }
