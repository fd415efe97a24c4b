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
// Param matches one; false if none is offered.
func (c *Catalog) FirstOf(list string) (*Lang, bool) {
	if len(list) > maxAccept {
		return nil, false
	}
	for _, s := range strings.Fields(list) {
		if l, ok := c.Param(s); ok {
			return l, true
		}
	}
	return nil, false
}

// Accept is the offered language of an Accept-Language header's most
// preferred tag that names one (quality values honoured; each tag matched
// as Param matches one), or the default.
func (c *Catalog) Accept(header string) *Lang {
	if header == "" || len(header) > maxAccept {
		return c.Default()
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return c.Default()
	}
	for _, t := range tags { // sorted by quality, the header's order kept among equals
		if l, ok := c.match(t); ok {
			return l
		}
	}
	return c.Default()
}

// match is the offered language that is want's own language: one x/text
// rates at least a High match for want, a region (pt-PT → pt-BR, de-AT →
// de) but not a script (zh-TW, in Traditional characters, is not given
// zh-CN's Simplified ones), and of the same base language, or an Exact
// match (cmn → zh, arb → ar: a macrolanguage's member). x/text's other High
// matches are a second language CLDR supposes the speaker reads (sw, tlh,
// yo → en; gsw → de; wo → fr): a language not offered, which falls to the
// default, or to the next preference of the list it came in.
func (c *Catalog) match(want language.Tag) (*Lang, bool) {
	_, i, conf := c.matcher.Match(want)
	if conf < language.High {
		return nil, false
	}
	if base, _ := want.Base(); conf < language.Exact && base != c.bases[i] {
		return nil, false
	}
	return c.langs[i], true
}
