// Command latchkey is a self-hosted authentication service that speaks the
// NextAuth.js REST API. main only parses flags, loads the config, and runs
// app.New until a signal arrives.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/latchkey-auth/latchkey/admin"
	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/forwardauth"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
	"github.com/latchkey-auth/latchkey/app/openidprovider"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/startup"
	"github.com/latchkey-auth/latchkey/views"
)

// defaultConfig is used when neither --config nor ./config.yaml exists, so
// `go run .` and the bare binary work anywhere.
//
//go:embed config.yaml
var defaultConfig []byte

const usage = `latchkey: NextAuth.js-compatible authentication service

Usage:
  latchkey [--config FILE]               run the service
  latchkey [--config FILE] check-config  validate the configuration, print every problem
  latchkey [--config FILE] migrate        apply pending database migrations, then exit
  latchkey [--config FILE] migrate status show the schema version and pending migrations
  latchkey providers                     list the OAuth provider ids of the catalogue
  latchkey version (or --version)        the version, commit, build date, Go version
  latchkey [--config FILE] health [--url URL]
                                         ask the running service's /health/ready
                                         (default: the configured listener); exit 0
                                         when ready, 1 otherwise (a HEALTHCHECK)

Admin commands, on the configured database while the service runs
(--config FILE may also follow them; exit 2: bad command line, 1: failed):
  latchkey users list [--json]                  users with linked providers and sessions
  latchkey users show <email|id>                one user: accounts, sessions, pending links
  latchkey users delete [--yes] <email|id>      delete a user, its accounts, sessions, links
  latchkey users create <email> [--password-stdin]
                                                a verified user; its password from stdin
  latchkey users two-factor [--yes] status|reset|forget-devices <email|id>
                                                a user's two-factor: show it, remove it,
                                                or forget its remembered browsers
  latchkey users groups add|remove <email|id> <group>
                                                put a user in a group, or take it out
  latchkey users groups list [<email|id>]       a user's groups, or every group's members
  latchkey sessions list [--user <email|id>] [--json]
                                                the live database sessions
  latchkey sessions revoke --user <email|id>    end a user's sessions (jwt ones too)
  latchkey sessions revoke --all [--yes]        end every session
  latchkey accounts unlink [--yes] <email|id> <provider>
                                                remove a user's link to an OAuth provider
  latchkey clients add <id> --name <name> --redirect-uri <uri> [--redirect-uri <uri>]...
           [--post-logout-uri <uri>]... [--public] [--first-party] [--refresh-tokens]
           [--scope <scope>]...                 an OpenID Provider client; prints its secret once
  latchkey clients list [--json]                config.yaml's and stored clients (no secrets)
  latchkey clients remove [--yes] <id>          delete a stored client, its consents and tokens
  latchkey clients rotate-secret [--keep-previous 24h] <id>
                                                a new secret for a stored client, printed once;
                                                the previous one works that long (0: stops now)
  latchkey clients end-previous-secret [--yes] <id>
                                                stop now the previous secret a rotation kept
  latchkey clients hash-secret                  a secret from stdin as config.yaml's secret_hash
  latchkey oidc rotate-keys [--now]             new signing keys, signing after key_publish_lead
  latchkey oidc keys [--json]                   the published signing keys
  latchkey import next-auth --from <url|file>|--from-env NAME
           [--schema auto|prisma|sql|drizzle] [--dry-run] [--batch-size N]
                                                copy a next-auth database's users, accounts,
                                                live sessions and links (migrates first);
                                                a URL with a password: --from-env NAME
  latchkey webhooks list [--status pending|delivered|failed] [--endpoint NAME]
           [--limit N] [--before CURSOR] [--json]
                                                the webhook outbox's deliveries, newest first
  latchkey webhooks show <event-id> [--json]    an event's body and each endpoint's delivery
  latchkey webhooks retry <event-id>            send an event's failed deliveries again
  latchkey webhooks retry-failed                send every failed delivery again
  latchkey webhooks test <endpoint>             a signed webhook.test to the endpoint, now
Deleting, unlinking, resetting two-factor and revoking everything ask for
confirmation on a terminal; without one they need --yes.

Without --config, ./config.yaml is read when present, else built-in defaults.
Environment: SERVICE_URL (AUTH_URL, NEXTAUTH_URL), AUTH_SECRET (NEXTAUTH_SECRET,
AUTH_SECRET_FILE), PORT, LISTEN (address to listen on, e.g. 127.0.0.1; every
interface when unset), DATABASE_URL, LOG_LEVEL (debug, info, warn, error),
LOG_FORMAT (text, json), METRICS_ADDR (Prometheus /metrics listener, e.g.
127.0.0.1:9464; off when unset), and the variable each webhook endpoint's
secret_env names (its whsec_ secrets).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("latchkey", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	configPath := fs.String("config", "", "configuration file (YAML)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cmd, sub := fs.Arg(0), ""
	if *showVersion {
		cmd = "version"
	}
	switch {
	case cmd == "health": // parses its own flags (health.go)
		return runHealth(*configPath, fs.Args()[1:], stderr)
	case cmd == "version" && fs.NArg() > 1:
		fmt.Fprintf(stderr, "latchkey: unexpected argument %q\n\n%s", fs.Arg(1), usage)
		return 2
	case cmd == "version":
		fmt.Fprintln(stdout, currentBuild())
		return 0
	}
	if admin.IsGroup(cmd) { // admin commands parse their own flags (package admin)
		return admin.Run(loadConfig, *configPath, fs.Args(), os.Stdin, stdout, stderr)
	}
	if cmd != "" {
		// Flags may also follow the command (`check-config --config FILE`);
		// silently ignoring them would validate the wrong file.
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return 2
		}
		if cmd == "migrate" && fs.Arg(0) == "status" {
			sub = "status"
			if err := fs.Parse(fs.Args()[1:]); err != nil {
				return 2
			}
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "latchkey: unexpected argument %q\n\n%s", fs.Arg(0), usage)
			return 2
		}
	}
	if *showVersion { // a --version after the command
		fmt.Fprintln(stdout, currentBuild())
		return 0
	}
	switch cmd {
	case "":
		return serve(*configPath, stderr)
	case "check-config":
		return checkConfig(*configPath, stdout, stderr)
	case "migrate":
		return migrate(*configPath, sub == "status", stdout, stderr)
	case "providers":
		for _, id := range catalogue.IDs() {
			s, _ := catalogue.Lookup(id)
			line := id + "\t" + s.Name
			if len(s.Extra) > 0 {
				line += "\t(extra: " + strings.Join(s.Extra, ", ") + ")"
			}
			fmt.Fprintln(stdout, line)
		}
		return 0
	default:
		fmt.Fprintf(stderr, "latchkey: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

// newLogger writes at LOG_LEVEL (info by default) in format: text, or
// JSON lines for "json" (config log.format, LOG_FORMAT).
func newLogger(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevel(), ReplaceAttr: dropClientState}
	if format == config.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// setDefaultLogger makes log slog's default logger, through which the
// OpenID Provider's library (zitadel/oidc) logs: its lines come out as
// ours do, with its failures of requests the client abandoned lowered to
// info (logs.ClientGone).
func setDefaultLogger(log *slog.Logger) {
	slog.SetDefault(slog.New(logs.ClientGone(log.Handler())))
}

// dropClientState leaves the state a relying party sent (a value it
// checks, so not for the logs) out of the OpenID Provider library's
// error lines (zitadel/oidc logs an oidc.Error as the group oidc_error),
// and the characters of a bad %-escape its parent error quotes: the
// library logs url.QueryUnescape's error of a Basic header's client
// secret as it is ("invalid URL escape \"%Q7\"", a piece of the secret).
func dropClientState(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 || groups[0] != "oidc_error" {
		return a
	}
	if a.Key == "state" || a.Key == "session_state" {
		return slog.Attr{}
	}
	var escape url.EscapeError
	if err, ok := a.Value.Any().(error); ok && errors.As(err, &escape) {
		return slog.String(a.Key, "invalid URL escape")
	}
	return a
}

// logLevel is LOG_LEVEL's level, info when unset or unknown.
func logLevel() slog.Level {
	level, _ := readLogLevel()
	return level
}

// readLogLevel is LOG_LEVEL's level and whether it was unset or known: an
// unknown one (a typo, "trace") logs at info, and the configuration's
// warnings say so rather than leave the operator without the lines asked
// for.
func readLogLevel() (slog.Level, bool) {
	level := slog.LevelInfo
	if v, ok := os.LookupEnv("LOG_LEVEL"); ok && v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return slog.LevelInfo, false
		}
	}
	return level, true
}

// loadConfig reads the file and environment and validates everything.
func loadConfig(path string) (config.Config, []string, error) {
	data := defaultConfig
	switch {
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return config.Config{}, nil, fmt.Errorf("read config: %w", err)
		}
		data = b
	default:
		if b, err := os.ReadFile("config.yaml"); err == nil {
			data = b
		}
	}
	// Load's problems (unknown keys, bad values) and Validate's are listed together.
	cfg, err := config.Load(data, os.LookupEnv)
	if err != nil && !config.IsProblems(err) {
		return cfg, nil, err
	}
	warnings, verr := cfg.Validate(app.CatalogueExtra)
	warnings = append(warnings, forwardauth.AccessWarnings(cfg)...)
	if _, ok := readLogLevel(); !ok {
		warnings = append(warnings, fmt.Sprintf("LOG_LEVEL: %q is none of debug, info, warn, error: logging at info", os.Getenv("LOG_LEVEL")))
	}
	return cfg, warnings, config.Merge(err, verr)
}

func checkConfig(path string, stdout, stderr io.Writer) int {
	// Which binary judged the file: another version may judge it otherwise.
	fmt.Fprintln(stdout, currentBuild())
	cfg, warnings, err := loadConfig(path)
	for _, w := range warnings {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	if err != nil {
		printProblems(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, secretsSummary(cfg))
	langs, err := i18n.Load(views.Locales(), cfg.I18n.Default, cfg.I18n.Languages)
	if err != nil {
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	fmt.Fprintln(stdout, languagesSummary(langs))
	if len(cfg.Access) > 0 {
		fmt.Fprintln(stdout, accessSummary(cfg.Access))
	}
	if cfg.OpenID.Enabled {
		fmt.Fprintln(stdout, openIDSummary(cfg))
	}
	if len(cfg.Webhooks.Endpoints) > 0 {
		fmt.Fprintln(stdout, admin.WebhooksSummary(cfg.Webhooks))
	}
	if cfg.IsPostgres() {
		line, err := postgresSummary(cfg)
		if err != nil {
			fmt.Fprintln(stderr, "error: "+err.Error())
			return 1
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintln(stdout, "configuration OK")
	return 0
}

// languagesSummary is check-config's line about the pages' languages: each
// offered one by tag and own name, the default first.
func languagesSummary(c *i18n.Catalog) string {
	names := make([]string, 0, len(c.Langs()))
	for i, l := range c.Langs() {
		n := l.Tag() + " (" + l.Name()
		if i == 0 {
			n += ", default"
		}
		names = append(names, n+")")
	}
	return "languages: " + strings.Join(names, ", ")
}

// accessSummary is check-config's line about the access rules: how many,
// and the two things about them an upgrade changed (issue 26): a host no
// rule names is refused, and e-mail rules admit verified addresses only.
func accessSummary(rules []config.AccessRule) string {
	return fmt.Sprintf("access: %d rules; a host no rule names is refused (403; name it with anyone: true to open it); emails/domains admit verified addresses only", len(rules))
}

// openIDSummary is check-config's line about the OpenID Provider: its
// issuer (where discovery is), its config.yaml clients and the signing
// algorithm. Clients added by `latchkey clients add` live in the database
// and are not counted (`latchkey clients list` shows them).
func openIDSummary(cfg config.Config) string {
	issuer := cfg.ServiceURL
	if b, err := config.ParseBase(cfg.ServiceURL); err == nil {
		issuer = openidprovider.Issuer(b)
	}
	return fmt.Sprintf("OpenID Provider: issuer %s (discovery %s/.well-known/openid-configuration), %s in config.yaml, ID tokens signed %s",
		issuer, issuer, plural(int64(len(cfg.OpenID.Clients)), "client"), cfg.OpenID.SigningAlgorithm)
}

// printProblems writes every configuration problem, one "error:" line each.
func printProblems(w io.Writer, err error) {
	var p config.Problems
	if !errors.As(err, &p) {
		fmt.Fprintln(w, "error: "+err.Error())
		return
	}
	for _, line := range p {
		fmt.Fprintln(w, "error: "+line)
	}
}

// migrate applies pending migrations (under the same lock as a starting
// instance), or with status only reports them, for operators who migrate
// before they deploy.
func migrate(path string, statusOnly bool, stdout, stderr io.Writer) int {
	cfg, _, err := loadConfig(path)
	if err != nil {
		printProblems(stderr, err)
		return 1
	}
	// Connect applies the pending steps (unless statusOnly), under the
	// lock a starting instance takes. A deploy job that migrates first may
	// run during a fail-over: it waits for a writable primary as a
	// starting instance does, and a migration the fail-over interrupted is
	// retried as a whole (models/startup).
	sc := app.StoreConfig(cfg)
	sc.SkipMigrate = statusOnly
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, err := startup.Connect(ctx, sc, startup.Wait{For: cfg.Database.StartupWait.D(), Log: newLogger(stderr, cfg.Log.Format), Target: cfg.RedactedDatabaseURL()})
	switch {
	case errors.Is(err, models.ErrNoAnswer):
		fmt.Fprintf(stderr, "error: open the database %s: %v\n", cfg.RedactedDatabaseURL(), err)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := store.Status(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	fmt.Fprintf(stdout, "%s schema: version %d of %d\n", store.Dialect(), st.Applied, st.Latest)
	for _, p := range st.Pending {
		fmt.Fprintln(stdout, "pending: "+p)
	}
	return 0
}

// postgresSummary checks, when the database answers, that its schema is
// one this binary can use (a newer one is an error); a database that does
// not answer now is only reported, as it may be reachable from production.
func postgresSummary(cfg config.Config) (string, error) {
	sc := app.StoreConfig(cfg)
	sc.SkipMigrate = true
	store, err := models.Connect(sc)
	if err != nil {
		return "warning: database " + cfg.RedactedDatabaseURL() + " does not answer from here: " + err.Error(), nil
	}
	defer store.Close()
	st, err := store.Status(context.Background())
	if err != nil {
		return "", fmt.Errorf("database %s: %w", cfg.RedactedDatabaseURL(), err)
	}
	if st.Applied > st.Latest {
		return "", fmt.Errorf("database schema version %d is newer than this latchkey knows (%d): run the newer latchkey", st.Applied, st.Latest)
	}
	return fmt.Sprintf("database: postgres answers, schema version %d of %d (%d pending, applied at start-up)", st.Applied, st.Latest, len(st.Pending)), nil
}

// secretsSummary says how many secrets are active, never their values.
func secretsSummary(cfg config.Config) string {
	switch n := len(cfg.Secrets()); n {
	case 0:
		return "secrets: none set (a generated one in the data folder will be used)"
	case 1:
		return "secrets: 1 active"
	default:
		return fmt.Sprintf("secrets: %d active (AUTH_SECRET_1..3 rotation: the first signs, all are accepted)", n)
	}
}

func serve(path string, stderr io.Writer) int {
	cfg, warnings, err := loadConfig(path)
	// The format is known once the config is read; a config that does not
	// load is reported in LOG_FORMAT's format, when it names a valid one.
	format := cfg.Log.Format
	if err != nil {
		format = os.Getenv("LOG_FORMAT")
	}
	// Access lines (one per request) are batched into a few writes a
	// second; every other line is written at once, in order with them.
	out := logs.NewOutput(stderr, 100*time.Millisecond)
	defer out.Close()
	log := newLogger(out, format)
	setDefaultLogger(log)
	for _, w := range warnings {
		log.Warn(w)
	}
	if err != nil {
		var p config.Problems
		if !errors.As(err, &p) {
			p = config.Problems{err.Error()}
		}
		for _, line := range p {
			log.Error("invalid configuration: " + line)
		}
		log.Error("latchkey did not start; `latchkey --config FILE check-config` lists every problem")
		return 1
	}
	if err := cfg.EnsureSecret(); err != nil {
		log.Error("secret", "err", err)
		return 1
	}
	if cfg.SecretGenerated {
		log.Warn("no AUTH_SECRET set: using a generated secret stored in the data folder (development only: an https SERVICE_URL requires AUTH_SECRET)", "dir", cfg.DataDir)
	}
	// Signals count from here: start-up may wait for the database
	// (database.startup_wait), and a stop asked meanwhile ends the wait.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	build := currentBuild()
	a, err := app.New(cfg, app.Options{Logger: log, AccessLog: logs.NewAccess(out.Batched(), format == config.LogJSON, logLevel()),
		Build: build.metrics(), StartContext: ctx})
	if err != nil && ctx.Err() != nil {
		log.Info("latchkey stopped before the database was ready", "err", err)
		return 0
	}
	if err != nil {
		log.Error("start", "err", err)
		return 1
	}
	defer a.Close()

	l, err := net.Listen("tcp", cfg.ListenAddr())
	if err != nil {
		log.Error("listen", "err", err)
		return 1
	}
	log.Info("latchkey listening", "addr", l.Addr().String(), "base", a.Base().URL(""), "sessions", cfg.Session.Strategy,
		"version", build.Version, "commit", build.Commit)
	if err := a.Serve(ctx, l); err != nil {
		log.Error("server stopped", "err", err)
		return 1
	}
	log.Info("latchkey stopped")
	return 0
}

// plural is "1 client", "2 clients".
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// oneLine joins a message's lines, for a one-line answer.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
