package admin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/importer"
	"github.com/latchkey-auth/latchkey/app/providertokens"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/importstore"
)

// importFlags are `import next-auth`'s flags.
type importFlags struct {
	from, fromEnv, schema string
	dryRun                bool
	batchSize             int
}

func (f *importFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.from, "from", "", "the next-auth database (`source`): a postgres:// URL, sqlite:PATH or a SQLite file (a URL with a password: use --from-env)")
	fs.StringVar(&f.fromEnv, "from-env", "", "read --from's value from the environment variable `NAME` (or the file NAME_FILE names), keeping a password out of ps and shell history")
	fs.StringVar(&f.schema, "schema", "auto", "the adapter's tables: auto, "+strings.Join(importstore.Schemas(), ", "))
	fs.BoolVar(&f.dryRun, "dry-run", false, "read and judge everything, write nothing")
	fs.IntVar(&f.batchSize, "batch-size", 1000, "rows per read and per write")
}

func checkImport(r *adminRun) error {
	f := &r.importing
	if f.fromEnv != "" {
		if f.from != "" {
			return badInput{errors.New("give either --from or --from-env, not both")}
		}
		v, err := config.FromEnv(os.LookupEnv, f.fromEnv)
		if err != nil {
			return badInput{fmt.Errorf("--from-env: %w", err)}
		}
		if v == "" {
			return badInput{fmt.Errorf("--from-env: %s (or %s_FILE) is unset or empty", f.fromEnv, f.fromEnv)}
		}
		f.from = v
	}
	switch {
	case f.from == "":
		return badInput{errors.New("--from (or --from-env) is required")}
	case f.schema != "auto" && !slices.Contains(importstore.Schemas(), f.schema):
		return badInput{fmt.Errorf("--schema %q: one of auto, %s", f.schema, strings.Join(importstore.Schemas(), ", "))}
	case f.batchSize < 1 || f.batchSize > 100_000:
		return badInput{fmt.Errorf("--batch-size %d: between 1 and 100000", f.batchSize)}
	}
	// Any other scheme would be taken for a SQLite file's name, and the
	// URL, password and all, repeated in the error: only the scheme here.
	if scheme, _, ok := strings.Cut(f.from, "://"); ok && !strings.ContainsAny(scheme, "/?") &&
		!slices.Contains([]string{"postgres", "postgresql", "sqlite"}, scheme) {
		return badInput{fmt.Errorf("--from: the scheme %q is neither postgres:// (or postgresql://, in lower case) nor a SQLite file (sqlite:PATH or a path)", scheme)}
	}
	if f.fromEnv == "" && hasPassword(f.from) {
		fmt.Fprintln(r.errw, "latchkey: import next-auth: warning: --from carries a password, which other users see in `ps` and your shell keeps in its history: use --from-env NAME (or a password-less URL with PGPASSWORD or ~/.pgpass)")
	}
	return nil
}

// hasPassword reports whether a postgres:// URL carries a password, in
// its user information or its query (a key's passphrase too).
func hasPassword(from string) bool {
	u, err := url.Parse(from)
	if err != nil || u.Scheme == "" {
		return false
	}
	_, has := u.User.Password()
	q := u.Query()
	return has || slices.ContainsFunc(importstore.SecretParams, q.Has)
}

// importNextAuth is `latchkey import next-auth`: copy a next-auth
// database's users, accounts, live sessions and links into latchkey's
// (app/importer says what and how; docs/migrating-from-next-auth.md).
func importNextAuth(r *adminRun) error {
	f := r.importing
	// Not the admin commands' minute: a large database takes longer.
	ctx := context.WithoutCancel(r.ctx)
	schema := f.schema
	if schema == "auto" {
		schema = ""
	}
	src, err := importstore.Open(ctx, f.from, schema)
	if err != nil {
		return err
	}
	defer src.Close()
	providers := make([]string, 0, len(r.cfg.Providers))
	var keep []string
	for _, p := range r.cfg.Providers {
		providers = append(providers, p.ID)
		if p.StoreTokens {
			keep = append(keep, p.ID)
		}
	}
	var seal func(*models.Account) error
	if len(keep) > 0 {
		// The service's secret (or the one it generated): tokens sealed
		// under another would be unreadable to it.
		secrets, err := r.keySecrets()
		if err != nil {
			return fmt.Errorf("providers with store_tokens: %w", err)
		}
		sealer, err := providertokens.NewSealer(secrets)
		if err != nil {
			return err
		}
		seal = sealer.SealAccount
	}
	started := time.Now()
	sum, err := importer.Run(ctx, src, importstore.NewTarget(r.store), importer.Options{
		BatchSize: f.batchSize,
		DryRun:    f.dryRun,
		Providers: providers,
		// Sealed under the service's secret, as GET /token reads them.
		KeepTokens: keep,
		SealTokens: seal,
		Progress: func(table string, read int) {
			fmt.Fprintf(r.errw, "import: %s: %d read (%s)\n", table, read, time.Since(started).Round(time.Millisecond))
		},
	})
	printImport(r, src.Described, f.dryRun, sum)
	if err != nil {
		return fmt.Errorf("stopped (what is listed above was done; run it again to go on): %w", err)
	}
	return nil
}

// maxSkipLines bounds the skipped list; the counts above it are whole.
const maxSkipLines = 200

func printImport(r *adminRun, from string, dryRun bool, s importer.Summary) {
	mode := "schema: " + s.Schema
	if dryRun {
		mode += ", dry run: nothing written"
	}
	fmt.Fprintf(r.out, "next-auth import from %s (%s)\n", from, mode)
	for _, t := range []struct {
		name string
		c    importer.Count
	}{{"users", s.Users}, {"accounts", s.Accounts}, {"sessions", s.Sessions}, {"verification tokens", s.Tokens}} {
		fmt.Fprintf(r.out, "%s: %d read, %d imported, %d already there, %d skipped\n", t.name, t.c.Read, t.c.Imported, t.c.There, t.c.Skipped)
	}
	if s.TokensKept > 0 {
		fmt.Fprintf(r.out, "provider tokens: kept, sealed, for %s (providers with store_tokens: GET /token/:provider hands them to the app)\n", plural(int64(s.TokensKept), "account"))
	}
	if s.TokensDropped > 0 {
		fmt.Fprintf(r.out, "provider tokens: not kept for %s (their providers have no store_tokens: users sign in again at the provider when an app needs one)\n", plural(int64(s.TokensDropped), "account"))
	}
	if s.ImagesDropped > 0 {
		fmt.Fprintf(r.out, "images: dropped for %s (not an http(s) URL or a /path, or over 2 KiB, as a sign-in drops them; the users came in)\n", plural(int64(s.ImagesDropped), "user"))
	}
	if len(s.UnknownProviders) > 0 {
		var names []string
		for p, n := range s.UnknownProviders {
			names = append(names, fmt.Sprintf("%s (%d)", printable(p), n))
		}
		sort.Strings(names)
		fmt.Fprintf(r.out, "providers not in latchkey's configuration: %s (their accounts came in; add the providers with the same ids to sign in with them)\n", strings.Join(names, ", "))
	}
	if len(s.Skipped) == 0 {
		return
	}
	fmt.Fprintln(r.out, "skipped:")
	for i, k := range s.Skipped {
		if i == maxSkipLines {
			fmt.Fprintf(r.out, "  … and %d more reasons\n", len(s.Skipped)-i)
			break
		}
		key, reason := printable(k.Key), printable(k.Reason)
		switch {
		case k.Key == "":
			fmt.Fprintf(r.out, "  %s: %d %s\n", k.Table, k.N, reason)
		case k.N > 1:
			fmt.Fprintf(r.out, "  %s %s (%d): %s\n", k.Table, key, k.N, reason)
		default:
			fmt.Fprintf(r.out, "  %s %s: %s\n", k.Table, key, reason)
		}
	}
}

// printable is s with what a terminal would act on or show misleadingly
// (control and format characters: escapes, carriage returns, bidi
// overrides) escaped as %q escapes it; printable text is left as it is.
// The summary's keys and reasons carry the next-auth database's values.
func printable(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
