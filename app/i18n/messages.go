package i18n

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/nicksnyder/go-i18n/v2/i18n/template"
)

// Messages are rendered once, at load, through go-i18n (its fallback to
// the source language, its templates) with every placeholder standing in
// as a mark; a Lang keeps only the results, and T fills the marks. The
// bundle, its parsed messages and their templates (about a megabyte for
// the twelve shipped languages, some 20,000 objects) are then dropped: a
// running service would otherwise carry them as live heap that every
// garbage collection marks, for pages that only read strings.
//
// A mark is markByte followed by one byte, the placeholder's index in
// the catalogue's names plus one. No message may contain markByte.
const markByte = 0

// placeholderName finds the names a message's template reads: {{.Email}}.
var placeholderName = regexp.MustCompile(`\{\{-?\s*\.([A-Za-z_][A-Za-z0-9_]*)`)

// maxNames is how many placeholder names the one-byte marks can tell apart.
const maxNames = 255

// placeholderNames are the names read by any message of the files, sorted.
func placeholderNames(files []*goi18n.MessageFile) ([]string, error) {
	var names []string
	for _, f := range files {
		for _, m := range f.Messages {
			// Most messages have no placeholder; the regexp costs a
			// backtracking pass per message (a start's worth under -race).
			if !strings.Contains(m.Other, "{{") {
				continue
			}
			for _, sub := range placeholderName.FindAllStringSubmatch(m.Other, -1) {
				if !slices.Contains(names, sub[1]) {
					names = append(names, sub[1])
				}
			}
		}
	}
	if len(names) > maxNames {
		return nil, fmt.Errorf("i18n: %d placeholder names, at most %d", len(names), maxNames)
	}
	slices.Sort(names)
	return names, nil
}

// messageIDs are the ids of every message of the files, each once.
func messageIDs(files []*goi18n.MessageFile) []string {
	var ids []string
	seen := map[string]bool{}
	for _, f := range files {
		for _, m := range f.Messages {
			if !seen[m.ID] {
				seen[m.ID] = true
				ids = append(ids, m.ID)
			}
		}
	}
	return ids
}

// renderAll is every message id in tag's language (the source language's
// where tag's catalogue lacks it), placeholders left as marks. A template
// that reads a value other than a plain placeholder fails here, not on a
// page.
func renderAll(bundle *goi18n.Bundle, tag string, ids, names []string) (map[string]string, error) {
	loc := goi18n.NewLocalizer(bundle, tag)
	marks := make(map[string]string, len(names))
	for i, n := range names {
		marks[n] = string([]byte{markByte, byte(i + 1)})
	}
	parser := &template.TextParser{Option: "missingkey=error"}
	msgs := make(map[string]string, len(ids))
	for _, id := range ids {
		s, err := loc.Localize(&goi18n.LocalizeConfig{MessageID: id, TemplateData: marks, TemplateParser: parser})
		var notFound *goi18n.MessageNotFoundErr
		switch {
		case err != nil && errors.As(err, &notFound) && s == "":
			continue // in no catalogue this language falls back to
		case err != nil && !errors.As(err, &notFound):
			return nil, fmt.Errorf("i18n: %s.toml: %s: %w", tag, id, err)
		}
		if err := checkMarks(s, len(names)); err != nil {
			return nil, fmt.Errorf("i18n: %s.toml: %s: %w", tag, id, err)
		}
		msgs[id] = s
	}
	return msgs, nil
}

// checkMarks refuses a rendered message with a mark byte that is not a
// whole mark: one the catalogue wrote itself, or one a template changed.
func checkMarks(s string, names int) error {
	for i := 0; i < len(s); i++ {
		if s[i] != markByte {
			continue
		}
		if i+1 == len(s) || s[i+1] == 0 || int(s[i+1]) > names {
			return errors.New("a NUL byte in the message")
		}
		i++
	}
	return nil
}

// fill is message s (rendered by renderAll) with each mark replaced by its
// value in kv (names and values alternating), "<no value>" when kv lacks
// it, as go-i18n's templates show a missing value.
func fill(s string, names, kv []string) string {
	i := strings.IndexByte(s, markByte)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 32)
	for ; i >= 0; i = strings.IndexByte(s, markByte) {
		b.WriteString(s[:i])
		b.WriteString(lookup(kv, names[s[i+1]-1]))
		s = s[i+2:]
	}
	b.WriteString(s)
	return b.String()
}

// lookup is name's value in kv, or "<no value>".
func lookup(kv []string, name string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == name {
			return kv[i+1]
		}
	}
	return "<no value>"
}
