// Package admin is latchkey's admin commands (`latchkey users|sessions|
// accounts|groups|clients|oidc|two-factor|import|webhooks ...`), which an
// operator runs against the database of live instances; main hands them
// their command line (Run). Each group is a file named for it.
package admin

// The admin commands: `latchkey users|sessions|accounts VERB ...` act on
// the configured database while the service runs, for operators who would
// otherwise write SQL. Each prints one summary line of what it changed, or
// exits non-zero with one line saying what was wrong (2: the command line,
// 1: anything else). Output goes to the operator's terminal, not to a log,
// so it names users by e-mail address; it never shows a token or secret.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/adminstore"
	"github.com/latchkey-auth/latchkey/models/events"
)

// adminCommand is one `latchkey GROUP VERB` subcommand.
type adminCommand struct {
	group, verb string
	// args name its positional arguments; those in brackets ("[<group>]")
	// may be left out, from the last one (check says which a use needs).
	args []string
	// flags says which of the flags it takes: "j" --json, "y" --yes, "u"
	// --user, "a" --all, "p" --password-stdin, "c" a client's settings
	// (clients add), "n" --now, "k" --keep-previous, "i" import's flags, "w" webhooks list's
	// filters, "l" a listing's page (--limit, --after); "m" migrates the database first (import fills a fresh
	// one); "s" marks a command that needs the configuration and not the
	// database, "0" one that needs neither.
	flags string
	run   func(*adminRun) error
	// check, when set, rejects a bad combination of flags before the
	// database is opened.
	check func(*adminRun) error
}

func adminCommands() []adminCommand {
	return []adminCommand{
		{"users", "list", nil, "jl", usersList, nil},
		{"users", "show", []string{"<email|id>"}, "", usersShow, nil},
		{"users", "delete", []string{"<email|id>"}, "y", usersDelete, nil},
		{"users", "create", []string{"<email>"}, "p", usersCreate, nil},
		{"users", "two-factor", []string{"<status|reset|forget-devices>", "<email|id>"}, "y", usersTwoFactor, checkTwoFactor},
		{"users", "groups", []string{"<add|remove|list>", "[<email|id>]", "[<group>]"}, "", usersGroups, checkGroups},
		{"sessions", "list", nil, "jul", sessionsList, nil},
		{"sessions", "revoke", nil, "uay", sessionsRevoke, checkRevoke},
		{"accounts", "unlink", []string{"<email|id>", "<provider>"}, "y", accountsUnlink, nil},
		{"accounts", "unlink-all", []string{"<email|id>"}, "y", accountsUnlinkAll, nil},
		{"accounts", "tokens", []string{"<email|id>"}, "j", accountsTokens, nil},
		{"clients", "add", []string{"<id>"}, "c", clientsAdd, checkClientsAdd},
		{"clients", "list", nil, "j", clientsList, nil},
		{"clients", "remove", []string{"<id>"}, "y", clientsRemove, nil},
		{"clients", "rotate-secret", []string{"<id>"}, "k", clientsRotateSecret, checkRotateSecret},
		{"clients", "end-previous-secret", []string{"<id>"}, "y", clientsEndPreviousSecret, nil},
		{"clients", "hash-secret", nil, "0", clientsHashSecret, nil},
		{"oidc", "rotate-keys", nil, "n", oidcRotateKeys, nil},
		{"oidc", "keys", nil, "j", oidcKeys, nil},
		{"import", "next-auth", nil, "im", importNextAuth, checkImport},
		{"webhooks", "list", nil, "jw", webhooksList, checkWebhooksList},
		{"webhooks", "show", []string{"<event-id>"}, "j", webhooksShow, nil},
		{"webhooks", "retry", []string{"<event-id>"}, "", webhooksRetry, nil},
		{"webhooks", "retry-failed", nil, "", webhooksRetryFailed, nil},
		{"webhooks", "test", []string{"<endpoint>"}, "s", webhooksTest, nil},
	}
}

// IsGroup reports whether word starts an admin command.
func IsGroup(word string) bool {
	return slices.ContainsFunc(adminCommands(), func(c adminCommand) bool { return c.group == word })
}

// adminRun is one command's parsed line and what it works with.
type adminRun struct {
	cfg   config.Config
	store *models.Store
	ctx   context.Context
	args  []string
	json  bool
	yes   bool
	all   bool
	user  string
	in    *bufio.Reader
	inTTY bool
	inFD  int // standard input's descriptor, for reading a password without echo
	// passwordStdin is --password-stdin (users create).
	passwordStdin bool
	// client is clients add's flags; now is oidc rotate-keys --now.
	client    clientFlags
	rotateNow bool
	// keepPrevious is rotate-secret's --keep-previous, as given and as
	// read (checkRotateSecret).
	keepPrevious     string
	keepPreviousTime time.Duration
	importing        importFlags
	webhooks         webhookFlags
	page             adminstore.Page
	out              io.Writer
	errw             io.Writer
	now              time.Time
}

// LoadConfig reads and checks the configuration file at path (main's:
// the file, the embedded defaults and the environment), returning its
// warnings and every problem.
type LoadConfig func(path string) (config.Config, []string, error)

// Run runs `latchkey [--config FILE] GROUP VERB ...` (args start at
// GROUP); --config may also follow the command, as for the others.
func Run(load LoadConfig, configPath string, args []string, stdin *os.File, stdout, stderr io.Writer) int {
	fail := func(code int, name, msg string) int {
		fmt.Fprintf(stderr, "latchkey: %s: %s\n", name, oneLine(msg))
		return code
	}
	group := args[0]
	var verbs []string
	var cmd *adminCommand
	for _, c := range adminCommands() {
		if c.group != group {
			continue
		}
		verbs = append(verbs, group+" "+c.verb)
		if len(args) > 1 && args[1] == c.verb {
			cmd = &c
		}
	}
	if cmd == nil {
		what := "missing command"
		if len(args) > 1 {
			what = fmt.Sprintf("unknown command %q", args[1])
		}
		return fail(2, group, what+" (one of: "+strings.Join(verbs, ", ")+")")
	}
	name := cmd.group + " " + cmd.verb
	r := &adminRun{out: stdout, errw: stderr, now: time.Now(), in: bufio.NewReader(stdin), inTTY: term.IsTerminal(int(stdin.Fd())), inFD: int(stdin.Fd())}
	fs := r.flags(cmd, &configPath)
	pos, err := parseInterspersed(fs, args[2:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "usage: latchkey [--config FILE] "+commandUsage(cmd, fs))
		return 0
	}
	if err != nil {
		return fail(2, name, err.Error()+"; usage: latchkey "+commandUsage(cmd, fs))
	}
	if required := requiredArgs(cmd); len(pos) < required || len(pos) > len(cmd.args) {
		what := "too many arguments"
		if len(pos) < required {
			what = "missing " + strings.Join(cmd.args[len(pos):required], " ")
		}
		return fail(2, name, what+"; usage: latchkey "+commandUsage(cmd, fs))
	}
	r.args = pos
	if r.page.Limit < 0 { // a listing's --limit (0: every row)
		return fail(2, name, fmt.Sprintf("--limit %d: must be at least 0 (0: every row)", r.page.Limit)+"; usage: latchkey "+commandUsage(cmd, fs))
	}
	if cmd.check != nil {
		if err := cmd.check(r); err != nil {
			return fail(2, name, err.Error()+"; usage: latchkey "+commandUsage(cmd, fs))
		}
	}
	if strings.Contains(cmd.flags, "0") { // no configuration, no database
		return r.finish(name, cmd.run(r), fail)
	}

	cfg, _, err := load(configPath)
	if err != nil {
		var p config.Problems
		if errors.As(err, &p) && len(p) > 0 {
			err = errors.New(p[0])
		}
		return fail(1, name, "invalid configuration: "+err.Error()+" (`latchkey check-config` lists every problem)")
	}
	r.cfg = cfg
	// Changes made here are the operator's: their webhook events say "admin".
	ctx, cancel := context.WithTimeout(events.AsAdmin(context.Background()), time.Minute)
	defer cancel()
	r.ctx = ctx
	if strings.Contains(cmd.flags, "s") { // the configuration alone
		return r.finish(name, cmd.run(r), fail)
	}
	if r.store, err = openAdminStore(ctx, cfg, strings.Contains(cmd.flags, "m")); err != nil {
		return fail(1, name, err.Error())
	}
	defer r.store.Close()
	return r.finish(name, cmd.run(r), fail)
}

// finish is a command's exit code: 0, or its error in one line (2 for
// bad input, 1 for anything else).
func (r *adminRun) finish(name string, err error, fail func(int, string, string) int) int {
	if err == nil {
		return 0
	}
	if errors.As(err, new(badInput)) {
		return fail(2, name, err.Error())
	}
	return fail(1, name, err.Error())
}

// flags are the command's flags, bound to r's fields (and --config to
// configPath).
func (r *adminRun) flags(cmd *adminCommand, configPath *string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.group+" "+cmd.verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	fs.StringVar(configPath, "config", *configPath, "configuration file (YAML)")
	if strings.Contains(cmd.flags, "j") {
		fs.BoolVar(&r.json, "json", false, "print JSON")
	}
	if strings.Contains(cmd.flags, "y") {
		fs.BoolVar(&r.yes, "yes", false, "do not ask for confirmation")
	}
	if strings.Contains(cmd.flags, "u") {
		fs.StringVar(&r.user, "user", "", "the user (e-mail address or id)")
	}
	if strings.Contains(cmd.flags, "a") {
		fs.BoolVar(&r.all, "all", false, "every user")
	}
	if strings.Contains(cmd.flags, "p") {
		fs.BoolVar(&r.passwordStdin, "password-stdin", false, "read the user's password from standard input")
	}
	if strings.Contains(cmd.flags, "c") {
		r.client.bind(fs)
	}
	if strings.Contains(cmd.flags, "n") {
		fs.BoolVar(&r.rotateNow, "now", false, "sign with the new keys at once")
	}
	if strings.Contains(cmd.flags, "k") {
		fs.StringVar(&r.keepPrevious, "keep-previous", defaultKeepPrevious, "how long the replaced secret keeps working (`duration`, e.g. 24h, 7d; 0: it stops at once)")
	}
	if strings.Contains(cmd.flags, "i") {
		r.importing.bind(fs)
	}
	if strings.Contains(cmd.flags, "w") {
		r.webhooks.bind(fs)
	}
	if strings.Contains(cmd.flags, "l") {
		fs.IntVar(&r.page.Limit, "limit", defaultPageLimit, "at most `n` rows (a page; 0: every row)")
		fs.StringVar(&r.page.After, "after", "", "start after the `cursor` the previous page printed")
	}
	return fs
}

// requiredArgs is how many of cmd's positional arguments must be given:
// those before the first in brackets.
func requiredArgs(cmd *adminCommand) int {
	for i, a := range cmd.args {
		if strings.HasPrefix(a, "[") {
			return i
		}
	}
	return len(cmd.args)
}

// commandUsage is one command's synopsis, e.g. "users delete [--yes] <email|id>".
func commandUsage(cmd *adminCommand, fs *flag.FlagSet) string {
	parts := []string{cmd.group, cmd.verb}
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "config":
		case "user":
			parts = append(parts, "[--user <email|id>]")
		case "name":
			parts = append(parts, "--name <name>")
		default:
			if v, ok := f.Value.(*repeated); ok {
				arg := "[--" + f.Name + " " + v.meta + "]..."
				if v.required {
					arg = "--" + f.Name + " " + v.meta + " [--" + f.Name + " " + v.meta + "]..."
				}
				parts = append(parts, arg)
				break
			}
			if meta, _ := flag.UnquoteUsage(f); strings.Contains(f.Usage, "`") { // a value named in the usage
				parts = append(parts, "[--"+f.Name+" <"+meta+">]")
				break
			}
			parts = append(parts, "[--"+f.Name+"]")
		}
	})
	return strings.Join(append(parts, cmd.args...), " ")
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments (`users delete ann@example.com --yes`), which flag alone stops
// at; everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// openAdminStore opens the configured database as it is: the commands
// never migrate it (the service does, at start; `latchkey migrate` too),
// and refuse a schema other than this binary's.
func openAdminStore(ctx context.Context, cfg config.Config, migrate bool) (*models.Store, error) {
	sc := app.StoreConfig(cfg)
	sc.SkipMigrate = !migrate
	store, err := models.Connect(sc)
	if err != nil {
		return nil, fmt.Errorf("open the database %s: %w", cfg.RedactedDatabaseURL(), err)
	}
	st, err := store.Status(ctx)
	if err == nil && st.Applied != st.Latest {
		err = fmt.Errorf("the database schema is at version %d, this latchkey needs %d: run this latchkey's `migrate` first (or the matching latchkey)", st.Applied, st.Latest)
	} else if err == nil && len(st.Pending) > 0 { // a step of a lower version, merged later
		err = fmt.Errorf("the database schema lacks step %s: run this latchkey's `migrate` first", strings.Join(st.Pending, ", "))
	}
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	return store, nil
}

// oneLine keeps an error to one line, whatever a driver put in it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// errNoUser: an <email|id> that names no user.
var errNoUser = errors.New("no user with id or e-mail address")

// findUser resolves an <email|id> argument; unknown is an error naming it.
func (r *adminRun) findUser(ref string) (*models.User, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, errors.New("the user (<email|id>) is empty")
	}
	u, err := adminstore.New(r.store).FindUser(r.ctx, ref)
	if errors.Is(err, models.ErrNotFound) {
		return nil, fmt.Errorf("%w %q", errNoUser, ref)
	}
	return u, err
}

// confirm asks question on the terminal; without one (a script, a pipe)
// it refuses, so that nothing is deleted that nobody confirmed: --yes is
// how a script says it.
func (r *adminRun) confirm(question string) error {
	if r.yes {
		return nil
	}
	if !r.inTTY {
		return errors.New("not confirmed: standard input is not a terminal; pass --yes to go ahead without asking")
	}
	fmt.Fprint(r.errw, question+" [y/N] ")
	answer, _ := r.in.ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return errors.New("not confirmed; nothing changed")
}

// jwtNote is what a revocation means for JWT sessions, with the poll time.
func (r *adminRun) jwtNote() string {
	poll := r.cfg.Session.RevocationPoll.D()
	if poll <= 0 {
		poll = time.Second
	}
	return fmt.Sprintf("jwt sessions signed in before now end within %s on every instance", poll)
}

// dbNote is when instances stop answering deleted database sessions: at
// once, or within the lookup cache's TTL.
func (r *adminRun) dbNote() string {
	if ttl := r.cfg.Session.CacheTTL.D(); ttl > 0 {
		return fmt.Sprintf("instances stop answering them within %s", ttl)
	}
	return "instances stop answering them at once"
}

func (r *adminRun) printJSON(v any) error {
	enc := json.NewEncoder(r.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// label names a user for the operator: e-mail address and id.
func label(u *models.User) string {
	if u.Email == nil {
		return "(no e-mail) " + u.ID
	}
	return *u.Email + " (" + u.ID + ")"
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// plural is "1 account", "2 accounts".
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
