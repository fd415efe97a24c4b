package i18n

import (
	"strings"

	"golang.org/x/text/language"
)

// Limits on what a request may ask: a browser's Accept-Language is well
// under 200 bytes and a tag under 35 characters. Longer values are ignored
// unparsed, so a hostile header costs nothing.
const (
	maxAccept = 1024
	maxTag    = 35
)

// Param is the offered language a lang parameter names: the same tag, or
// one close enough (de-AT → de, pt → pt-BR; see match).
func (c *Catalog) Param(s string) (*Lang, bool) {
	if s == "" || len(s) > maxTag {
		return nil, false
	}
	t, err := language.Parse(s)
	if err != nil {
		return nil, false
	}
	return c.match(t)
}

// FirstOf is the first offered language of a space-separated list of tags
// in order of preference (OpenID Connect's ui_locales), each matched as
// Param matches one, of the same language; false if none is offered.
func (c *Catalog) FirstOf(list string) (*Lang, bool) {
	if len(list) > maxAccept {
		return nil, false
	}
	for _, s := range strings.Fields(list) {
		if len(s) > maxTag {
			continue
		}
		t, err := language.Parse(s)
		if err != nil {
			continue
		}
		// x/text rates some unoffered languages a High match for English
		// (sw, tlh): the list's next tag, if offered, is what was asked.
		if l, ok := c.match(t); ok && sameBase(t, l.tag) {
			return l, true
		}
	}
	return nil, false
}

// sameBase reports whether want and the offered tag are one language.
func sameBase(want language.Tag, offered string) bool {
	wb, _ := want.Base()
	ob, _ := language.Make(offered).Base()
	return wb == ob
}

// Accept is the best offered language for an Accept-Language header
// (quality values honoured), or the default.
func (c *Catalog) Accept(header string) *Lang {
	if header == "" || len(header) > maxAccept {
		return c.Default()
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return c.Default()
	}
	if l, ok := c.match(tags...); ok {
		return l
	}
	return c.Default()
}

// match is the offered language x/text rates at least a High match for
// want: a region (pt-PT → pt-BR, de-AT → de), not a script (zh-TW, in
// Traditional characters, is not given zh-CN's Simplified ones).
func (c *Catalog) match(want ...language.Tag) (*Lang, bool) {
	_, i, conf := c.matcher.Match(want...)
	if conf < language.High {
		return nil, false
	}
	return c.langs[i], true
}
