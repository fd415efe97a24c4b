// Package app is latchkey's HTTP service: the NextAuth.js REST API under the
// configured base path. New wires everything explicitly; there are no globals.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"time"

	"github.com/latchkey-auth/latchkey/app/access"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/connlimit"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/csrf"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/emailflow"
	"github.com/latchkey-auth/latchkey/app/forwardauth"
	"github.com/latchkey-auth/latchkey/app/groups"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/nextauth"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
	"github.com/latchkey-auth/latchkey/app/oauthflow"
	"github.com/latchkey-auth/latchkey/app/ops"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/passkeyflow"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/redirect"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/app/webhooks"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/groupstore"
	"github.com/latchkey-auth/latchkey/models/passkeystore"
	"github.com/latchkey-auth/latchkey/views"
)

// App is one running latchkey service: the HTTP layer around the sign-in
// rules (signin.Service) and the mechanisms they use.
type App struct {
	cfg  config.Config
	base config.Base
	log  *slog.Logger
	now  func() time.Time

	store *models.Store
	// revocations are the session revocations, polled (revocations.go).
	revocations *session.Revocations
	metrics     *metrics.Metrics // nil: metrics are off
	front       *front           // every answer, around the feature handlers' routes
	server      *http.Server
	// purge deletes expired rows in the background (purge.go); the
	// feature stores add theirs (the OpenID Provider's).
	purge *purger
	// deliver sends the webhook outbox's events (nil: no endpoint).
	deliver *webhooks.Worker
}

// wiring is what New derives from the config to build the feature
// handlers: the shared parts they are given, alive only while New runs
// (build).
type wiring struct {
	*App
	style   cookieStyle
	names   cookies.Names
	cookies cookies.Writer
	csrf    csrf.Signer
	policy  redirect.Policy
	hooks   signin.Hooks
	// claimHooks: a JWT or Session hook of Options may change a JWT
	// session's claims, which GET /session then re-issues.
	claimHooks bool
	// hasher checks and hashes every password of this instance, so that
	// its bound on concurrent Argon2id runs (19 MiB each) holds for all.
	hasher *password.Hasher
	// devices seals and opens the password sign-in's device cookies.
	devices  *signin.Devices
	theme    theme
	langs    *i18n.Catalog
	kit      *web.Kit
	core     *signin.Service
	sessions session.Strategy
	passkeys *passkey.Parties
	// passkeyStore keeps the passkeys and the answered challenges.
	passkeyStore *passkeystore.Store
	// groups answers users' groups (forward-auth's Remote-Groups and
	// access rules; the OpenID Provider's groups claim).
	groups *groups.Service
}

// Options are the dependencies New does not build from the config itself.
type Options struct {
	// Logger receives the app's lines; nil means slog's default logger.
	// The OpenID Provider's library (zitadel/oidc) takes no logger and
	// logs its refusals (a bad code, a wrong client secret, an
	// unregistered redirect URI) through slog's default logger only: an
	// embedder that wants them with the app's sets that default, as main
	// does (setDefaultLogger, which also keeps the relying party's state
	// out of them).
	Logger *slog.Logger
	// AccessLog writes the access log's line per request (log.access); nil
	// means through Logger. main gives it a batched output (app/logs).
	AccessLog *logs.Access
	// Now is the clock (tests inject one); nil means time.Now.
	Now func() time.Time
	// Hooks replace the default callbacks when non-nil fields are given.
	Hooks *signin.Hooks
	// HTTPClient makes every call to identity providers (discovery, code
	// exchange, profile); nil means a client with a 10-second timeout. Tests
	// use it to reach local stand-ins for real providers' hosts.
	HTTPClient *http.Client
	// PurgeEvery is how often Serve deletes expired sessions and
	// verification tokens and full rate-limit buckets; zero means hourly.
	PurgeEvery time.Duration
	// PasswordHasher checks and hashes every password; nil means Argon2id
	// with the default parameters, at most 2 × GOMAXPROCS at once, waiting
	// at most 2 s for a slot. Tests give one with fewer slots, to fill them.
	PasswordHasher *password.Hasher
	// Build names the running binary in the latchkey_build_info metric
	// (main passes what `latchkey version` prints).
	Build metrics.Build
	// StartContext ends New's wait for the database (database.startup_wait)
	// when cancelled: main passes its signal context, so that a SIGTERM
	// during the wait stops the process at once. nil: never cancelled.
	StartContext context.Context
	// Langs are the pages' languages, loaded from views.Locales() for the
	// config's i18n settings (i18n.Load; New refuses one loaded for
	// others); nil means New loads them. Loading parses every language's
	// catalogue: tests that start many instances load it once.
	Langs *i18n.Catalog
}

// New builds the service from a validated config: opens the database,
// derives keys and precomputes everything GET /session and /providers need.
func New(cfg config.Config, opts Options) (*App, error) {
	cfg.Normalize()
	base, err := config.ParseBase(cfg.ServiceURL)
	if err != nil {
		return nil, fmt.Errorf("service url: %w", err)
	}
	secrets := cfg.Secrets()
	if len(secrets) == 0 {
		return nil, errors.New("no secret configured")
	}
	a := &App{cfg: cfg, base: base, log: opts.Logger, now: opts.Now}
	if cfg.Metrics.Listen != "" {
		a.metrics = metrics.New(opts.Build)
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	access := opts.AccessLog
	if access == nil {
		access = logs.AccessVia(a.log)
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.front = newFront(cfg, base, a.log, access, a.metrics)
	d := cookieStyleOf(cfg.Cookies.Style)
	w := &wiring{
		App:     a,
		style:   d,
		names:   cookies.NewNames(d.cookiePrefix, base.Secure),
		cookies: cookies.Writer{Secure: base.Secure},
		csrf:    csrf.NewSigner(secrets...),
		policy:  redirect.NewPolicy(base.Origin, cfg.AllowedRedirectOrigins),
		hooks:   signin.DefaultHooks(cfg.Callbacks),
		hasher:  opts.PasswordHasher,
	}
	if opts.Hooks != nil {
		w.hooks = w.hooks.With(*opts.Hooks)
		w.claimHooks = opts.Hooks.JWT != nil || opts.Hooks.Session != nil
	}
	if w.hasher == nil {
		w.hasher = password.Default().Limit(2*runtime.GOMAXPROCS(0), 2*time.Second)
	}
	startCtx := opts.StartContext
	if startCtx == nil {
		startCtx = context.Background()
	}
	if a.store, err = openStore(startCtx, cfg, a.metrics, a.log); err != nil {
		return nil, err
	}
	w.passkeyStore = passkeystore.New(a.store)
	a.revocations = &session.Revocations{}
	if err := a.loadRevocations(context.Background(), true); err != nil {
		_ = a.store.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	a.purge = &purger{every: opts.PurgeEvery, log: a.log, tasks: []func(context.Context) (int64, error){
		func(ctx context.Context) (int64, error) { return a.store.PurgeExpired(ctx, a.now()) },
		purgeRevocations(cfg, a.store, a.now),
	}}
	if a.purge.every <= 0 {
		a.purge.every = time.Hour
	}
	if a.deliver, err = newDeliverer(cfg, a.store, a.metrics, a.log); err != nil {
		_ = a.store.Close()
		return nil, err
	}
	if err := w.build(opts.HTTPClient, opts.Langs); err != nil {
		_ = a.store.Close()
		return nil, err
	}
	return a, nil
}

// GroupsCacheTTL is how long an instance keeps a user's stored groups
// (forward-auth asks on every request a proxy passes on): a membership
// added or removed by `latchkey users groups` (a process of its own) or
// on another instance reaches this one within it (docs/forward-auth.md).
const GroupsCacheTTL = 5 * time.Second

// loadLangs is the pages' languages for settings: loaded, the one given
// when it was loaded for them.
func loadLangs(settings config.I18n, given *i18n.Catalog) (*i18n.Catalog, error) {
	if given == nil {
		return i18n.Load(views.Locales(), settings.Default, settings.Languages)
	}
	if !given.LoadedFor(settings.Default, settings.Languages) {
		return nil, errors.New("i18n: Options.Langs was loaded for other i18n settings than the config's")
	}
	return given, nil
}

// build derives everything requests need from the config, once.
func (w *wiring) build(idpClient *http.Client, langs *i18n.Catalog) error {
	var err error
	// The NextAuth.js API counts failed sign-ins, which the kit answers;
	// it is built after the kit, so the kit reaches it through api.
	api := new(apiAfterKit)
	w.theme = buildTheme(w.cfg.Theme, w.base)
	if w.langs, err = loadLangs(w.cfg.I18n, langs); err != nil {
		return err
	}
	w.kit = w.buildKit(api)
	if w.sessions, err = w.buildSessions(); err != nil {
		return err
	}
	if w.passkeys, err = w.buildPasskeys(); err != nil {
		return err
	}
	if w.devices, err = signin.NewDevices(w.cfg.Secrets(), signin.KnownFor, w.revocations); err != nil {
		return err
	}
	w.core = &signin.Service{
		Users:       w.store,
		Tokens:      w.store,
		Passkeys:    w.passkeyStore,
		Hooks:       w.hooks,
		Now:         w.now,
		TokenHashes: func(token string) []string { return email.HashTokens(token, w.cfg.Secrets()) },
		JWTSessions: w.sessions.Name() == config.StrategyJWT,
		// The window of adding a passkey, for the same reason.
		ReauthWindow: passkey.ReauthWindow,
		Log:          w.log,
	}
	emailFlow, err := emailflow.New(emailflow.Deps{
		Providers: w.cfg.Providers, Base: w.base, Secrets: w.cfg.Secrets(), CookiePrefix: w.style.cookiePrefix,
		Counter: w.store, Colors: views.EmailColors{BrandColor: w.theme.brandColor, ButtonText: w.theme.buttonText},
		Lang: w.langs.Default(), Metrics: w.metrics, Kit: w.kit, Core: w.core, Browser: w.browser, Now: w.now, Log: w.log,
	})
	if err != nil {
		return err
	}
	accountRules, accountPages := w.buildAccountPages(emailFlow)
	twoFactor, twoFactorRules, err := w.buildTwoFactor(accountRules)
	if err != nil {
		return err
	}
	passkeyDeps := passkeyflow.Deps{
		Kit: w.kit, Parties: w.passkeys, Core: w.core, Registrants: accountRules,
		Sessions: w.sessions, Metrics: w.metrics, Now: w.now, Log: w.log,
	}
	if twoFactorRules != nil { // a nil *twofactor.Service would be a non-nil interface
		passkeyDeps.SecondFactor = twoFactorRules
	}
	passkeys := passkeyflow.New(passkeyDeps)
	flowLate := &flowAfterTokens{}
	tokens, err := w.buildTokens(flowLate)
	if err != nil {
		return err
	}
	oauthFlow, err := oauthflow.New(oauthflow.Deps{
		Providers: w.cfg.Providers, Base: w.base, Secrets: w.cfg.Secrets(),
		CheckCookie: w.names.OAuthCheck, CSRFCookie: w.names.CSRF, Cookies: w.cookies, MaxBodyBytes: w.cfg.MaxBodyBytes,
		HTTPClient: idpClient, Kit: w.kit, Core: w.core, Browser: w.browser, LinkNotice: func(ctx context.Context, u *models.User, p config.Provider) {
			accountPages.TellMethodAdded(ctx, u, p.ID, catalogue.DisplayName(p))
		},
		Tokens: tokens, Now: w.now, Log: w.log,
	})
	if err != nil {
		return err
	}
	flowLate.h = oauthFlow
	w.front.idps, w.front.passkeys, w.front.imgOrigin = oauthFlow, w.passkeys.Offered(), w.theme.imgOrigin
	w.groups = groups.New(groupstore.New(w.store), w.cfg.Groups.Rules, GroupsCacheTTL).WithOutageGrace(w.cfg.Session.OutageGrace.D())
	openIDProvider, openIDRules, err := w.buildOpenID(w.groups)
	if err != nil {
		return err
	}
	centre := w.buildAccountCentre(accountRules, oauthFlow, twoFactorRules, appsOf(openIDRules))
	providers, flows := w.cfg.Providers, map[string]nextauth.Flow{
		config.TypeOAuth: oauthFlow, config.TypeEmail: emailFlow, config.TypeWebAuthn: passkeys,
	}
	if twoFactor != nil {
		providers = append(slices.Clip(providers), twoFactorProvider)
		flows[config.TypeTwoFactor] = twoFactor.Flow()
	}
	var tokenErrors nextauth.TokenErrors // GET /session's error: only when a provider keeps tokens
	if w.cfg.StoresTokens() {
		tokenErrors = tokens
	}
	api.h, err = nextauth.New(nextauth.Deps{
		Kit: w.kit, Log: w.log, Core: w.core, Sessions: w.sessions, Hooks: w.hooks, Providers: providers,
		Flows:          flows,
		Credentials:    w.credentialsProvider,
		FormPostBounce: oauthFlow.FormPostBounce,
		Metrics:        w.metrics, Pages: w.cfg.Pages, Passkeys: w.passkeys.Offered(),
		SendsMail: w.cfg.SendsMail(), ReportsOIDC: w.style.reportsOIDC,
		TokenErrors: tokenErrors,
	})
	if err != nil {
		return err
	}
	openAPI, err := w.openAPIDocument(emailFlow.BindingCookie())
	if err != nil {
		return err
	}
	// The feature handlers of their own packages, each given exactly what
	// it uses.
	handlers := []mounter{
		api.h,
		forwardauth.New(api.h, w.groups, access.New(w.cfg.Access), w.front.proxies, w.policy, w.langs, w.base, w.log),
		ops.New(w.store, w.log, w.base.Path, openAPI, w.theme.css),
		accountPages,
		passkeys,
		centre,
		w.tokenHandler(api.h, tokens),
	}
	if twoFactor != nil {
		handlers = append(handlers, twoFactor)
	}
	if openIDProvider != nil {
		handlers = append(handlers, openIDProvider)
	}
	return w.front.mount(w.kit, w.cfg.TrustedProxies, handlers...)
}

// Handler is the whole HTTP service, for tests and embedding.
func (a *App) Handler() http.Handler { return a.front }

// Base is the parsed public base URL.
func (a *App) Base() config.Base { return a.base }

// Store is the database, for tests and maintenance commands.
func (a *App) Store() *models.Store { return a.store }

// Serve answers requests on l until ctx is cancelled, then shuts down
// gracefully, giving in-flight requests up to 10 seconds. At most
// server.max_connections connections are open at once (further ones wait in
// the kernel's accept queue, or take the slot of a connection idle between
// requests: app/connlimit) and keep-alive connections close after
// server.idle_timeout, so no number of held connections can use up the
// process's file descriptors.
func (a *App) Serve(ctx context.Context, l net.Listener) error {
	if a.cfg.Server.MaxConnections < 1 { // a limit of 0 would never accept anyone
		return fmt.Errorf("serve: server.max_connections is %d; it must be at least 1", a.cfg.Server.MaxConnections)
	}
	limited := connlimit.New(l, a.cfg.Server.MaxConnections)
	a.server = &http.Server{
		Handler:           a.front,
		ConnState:         limited.ConnState, // idle connections yield their slots
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       a.cfg.Server.IdleTimeout.D(),
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 2)
	var metricsServer *http.Server // nil: metrics are off
	if a.metrics != nil {
		var err error
		if metricsServer, err = ops.StartMetrics(a.cfg.Metrics.Listen, a.metrics.Handler(), a.log, errc); err != nil {
			return err
		}
	}
	go a.purge.run(ctx)
	if a.deliver != nil {
		go func() { _ = a.deliver.Run(ctx) }()
	}
	go a.revocationLoop(ctx)
	go a.front.idps.Discover(ctx)
	go func() { errc <- a.server.Serve(limited) }()
	var serveErr error
	select {
	case err := <-errc:
		serveErr = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := errors.Join(a.server.Shutdown(shutdownCtx), ops.ShutdownMetrics(shutdownCtx, metricsServer)); err != nil && serveErr == nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return serveErr
}

// MetricsHandler serves the metrics (what GET /metrics on the metrics
// listener answers), for tests and embedding; nil when metrics are off.
func (a *App) MetricsHandler() http.Handler {
	if a.metrics == nil {
		return nil
	}
	return a.metrics.Handler()
}

// Close releases the database.
func (a *App) Close() error { return a.store.Close() }
