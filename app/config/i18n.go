package config

import (
	"slices"

	"golang.org/x/text/language"
)

// I18n is the pages' and e-mails' languages: Default when a browser asks
// for none that is offered ("": the first of Languages, else English), and
// Languages, the offered ones (empty: every catalogue in views/locales). Whether a catalogue exists for each is
// checked when the catalogues load (app/i18n.Load, also run by
// check-config).
type I18n struct {
	Default   string   `yaml:"default"`
	Languages []string `yaml:"languages"`
}

// validateI18n reports a tag that is not BCP 47, or a default that the
// allow-list leaves out.
func (c *Config) validateI18n(add func(string, ...any)) {
	i := c.I18n
	if i.Default != "" {
		if _, err := language.Parse(i.Default); err != nil {
			add("i18n.default: %q is not a language tag (en, de, pt-BR, ...)", i.Default)
		}
	}
	for _, t := range i.Languages {
		if _, err := language.Parse(t); err != nil {
			add("i18n.languages: %q is not a language tag (en, de, pt-BR, ...)", t)
		}
	}
	if def := i.Default; def != "" && len(i.Languages) > 0 && !slices.ContainsFunc(i.Languages, func(t string) bool { return sameTag(t, def) }) {
		add("i18n.default: %q is not in i18n.languages", def)
	}
}

// sameTag reports whether a and b name the same language, in any case.
func sameTag(a, b string) bool {
	ta, errA := language.Parse(a)
	tb, errB := language.Parse(b)
	return errA == nil && errB == nil && ta == tb
}
