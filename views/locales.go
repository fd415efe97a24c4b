package views

import (
	"embed"
	"io/fs"
)

//go:embed locales/*.toml
var locales embed.FS

// Locales are the message catalogues of the pages and e-mails, one
// <tag>.toml per language (app/i18n reads them). Adding a file adds a
// language.
func Locales() fs.FS {
	sub, err := fs.Sub(locales, "locales")
	if err != nil {
		panic(err) // "locales" is a valid path: fs.Sub cannot fail here
	}
	return sub
}
