package admin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/importer"
)

// The import's summary goes to a terminal: the source's values in it (ids,
// identities, identifiers, providers) have their control and format
// characters escaped, as %q would, so a hostile next-auth row cannot
// clear the screen, rewrite earlier lines or reverse the text.
func TestImportSummaryEscapesSourceValues(t *testing.T) {
	var out strings.Builder
	sum := importer.Summary{
		Schema:           "sql",
		UnknownProviders: map[string]int{"gh\x1b]0;pwned\x07": 1},
		Skipped: []importer.Skip{
			{Table: "users", Key: "u\x1b[2J", Reason: "its e-mail is user u1\u202e's but for case", N: 1},
			{Table: "sessions", Key: "of user a\rb", Reason: "its user a\rb was skipped", N: 2},
		},
	}
	printImport(&adminRun{out: &out}, "sqlite:x.db", false, sum)
	got := out.String()
	for _, raw := range []string{"\x1b", "\x07", "\u202e", "\r"} {
		require.NotContains(t, got, raw)
	}
	for _, want := range []string{
		`providers not in latchkey's configuration: gh\x1b]0;pwned\a (1)`,
		`  users u\x1b[2J: its e-mail is user u1\u202e's but for case` + "\n",
		`  sessions of user a\rb (2): its user a\rb was skipped` + "\n",
	} {
		require.Contains(t, got, want)
	}
}
