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
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/netutil"

	"github.com/latchkey-auth/latchkey/app/access"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/csrf"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/emailflow"
	"github.com/latchkey-auth/latchkey/app/forwardauth"
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
	"github.com/latchkey-auth/latchkey/app/proxies"
	"github.com/latchkey-auth/latchkey/app/redirect"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// App is one running latchkey service: the HTTP layer around the sign-in
// rules (signin.Service) and the mechanisms they use.
type App struct {
	cfg     config.Config
	base    config.Base
	dialect dialect
	log     *slog.Logger
	now     func() time.Time
	purge   time.Duration

	store   *models.Store
	names   cookies.Names
	cookies cookies.Writer
	csrf    csrf.Signer
	policy  redirect.Policy
	hooks   signin.Hooks
	// claimHooks: a JWT or Session hook of Options may change a JWT
	// session's claims, which GET /session then re-issues.
	claimHooks bool

	core     *signin.Service
	sessions session.Strategy
	idps     identityProviders // the OAuth and OIDC providers (app/oauthflow)
	passkeys *passkey.Parties  // the webauthn providers and their challenge cookie
	proxies  proxies.Trusted   // trusted_proxies: whose forwarding headers are believed

	// revocations are the session revocations, polled (revocations.go).
	revocations *session.Revocations

	// theme is the config's theme, ready for the pages (theme.go).
	theme theme
	// langs are the pages' languages (app/i18n, views/locales).
	langs *i18n.Catalog

	// hasher checks and hashes every password of this instance, so that
	// its bound on concurrent Argon2id runs (19 MiB each) holds for all.
	hasher *password.Hasher

	echo    *echo.Echo
	handler http.Handler // serve: echo with what every answer needs around it
	server  *http.Server
	csp     cspCache
	// hsts is the Strict-Transport-Security value under https; nil over
	// http, where no answer carries it (securityHeaders).
	hsts      []string
	kit       *web.Kit  // request init, redirects, pages, the failure adapter (app/web)
	exchanges sync.Pool // *exchange, one per response in flight (serve)

	// Operations (observe.go; health and the metrics listener: app/ops).
	metrics   *metrics.Metrics // nil: metrics are off
	accessLog bool             // log.access
	access    *logs.Access     // where access lines go
	unmatched *routeTag        // requests no route took
}

// Options are the dependencies New does not build from the config itself.
type Options struct {
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
	d := dialectOf(cfg.Cookies.Style)
	a := &App{
		cfg:     cfg,
		base:    base,
		dialect: d,
		log:     opts.Logger,
		now:     opts.Now,
		purge:   opts.PurgeEvery,
		names:   cookies.NewNames(d.cookiePrefix, base.Secure),
		cookies: cookies.Writer{Secure: base.Secure},
		csrf:    csrf.NewSigner(secrets...),
		policy:  redirect.NewPolicy(base.Origin, cfg.AllowedRedirectOrigins),
		hooks:   signin.DefaultHooks(cfg.Callbacks),

		accessLog: cfg.Log.Access,
	}
	if v := cfg.HSTSValue(); v != "" {
		a.hsts = web.HeaderValue(v)
	}
	if cfg.Metrics.Listen != "" {
		a.metrics = metrics.New()
	}
	a.unmatched = a.routeTag(unmatchedRoute)
	a.exchanges.New = func() any { return &exchange{app: a} }
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.access = opts.AccessLog; a.access == nil {
		a.access = logs.AccessVia(a.log)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.purge <= 0 {
		a.purge = time.Hour
	}
	if opts.Hooks != nil {
		a.hooks = a.hooks.With(*opts.Hooks)
		a.claimHooks = opts.Hooks.JWT != nil || opts.Hooks.Session != nil
	}
	if a.store, err = openStore(cfg, a.metrics); err != nil {
		return nil, err
	}
	a.revocations = &session.Revocations{}
	if err := a.loadRevocations(context.Background()); err != nil {
		_ = a.store.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	if a.hasher = opts.PasswordHasher; a.hasher == nil {
		a.hasher = password.Default().Limit(2*runtime.GOMAXPROCS(0), 2*time.Second)
	}
	if err := a.build(opts.HTTPClient); err != nil {
		_ = a.store.Close()
		return nil, err
	}
	return a, nil
}

// build derives everything requests need from the config, once.
func (a *App) build(idpClient *http.Client) error {
	var err error
	var api *nextauth.Handler // the NextAuth.js API, built once the core is
	a.theme = buildTheme(a.cfg.Theme, a.base)
	if a.langs, err = i18n.Load(views.Locales(), a.cfg.I18n.Default, a.cfg.I18n.Languages); err != nil {
		return err
	}
	a.kit = web.NewKit(web.KitConfig{
		Base: a.base, Log: a.log, Names: a.names, Cookies: a.cookies, CSRF: a.csrf, Policy: a.policy,
		RedirectHook: a.hooks.Redirect, Langs: a.langs, Theme: a.theme.page, MaxBodyBytes: a.cfg.MaxBodyBytes,
		OnFailure: func(c echo.Context, code signin.Code) { api.CountFailedSignIn(c, code) }, NewUserPage: a.cfg.Pages.NewUser,
		OnSignIn: func(provider string) { a.metrics.SignIn(provider, metrics.OutcomeSuccess) },
	})
	if a.sessions, err = a.buildSessions(); err != nil {
		return err
	}
	if a.passkeys, err = a.buildPasskeys(); err != nil {
		return err
	}
	a.proxies = proxies.New(a.cfg.TrustedProxies)
	a.core = &signin.Service{
		Users:       a.store,
		Tokens:      a.store,
		Passkeys:    a.store,
		Hooks:       a.hooks,
		Now:         a.now,
		TokenHashes: func(token string) []string { return email.HashTokens(token, a.cfg.Secrets()) },
		JWTSessions: a.sessions.Name() == config.StrategyJWT,
		// The window of adding a passkey, for the same reason.
		ReauthWindow: passkey.ReauthWindow,
		Log:          a.log,
	}
	emailFlow, err := emailflow.New(emailflow.Deps{
		Providers: a.cfg.Providers, Base: a.base, Secrets: a.cfg.Secrets(), CookiePrefix: a.dialect.cookiePrefix,
		Counter: a.store, Colors: views.EmailColors{BrandColor: a.theme.brandColor, ButtonText: a.theme.buttonText},
		Lang: a.langs.Default(), Metrics: a.metrics, Kit: a.kit, Core: a.core, Browser: a.browser, Now: a.now, Log: a.log,
	})
	if err != nil {
		return err
	}
	accountRules, accountPages := a.buildAccountPages(emailFlow)
	passkeys := passkeyflow.New(passkeyflow.Deps{
		Kit: a.kit, Parties: a.passkeys, Core: a.core, Registrants: accountRules,
		Sessions: a.sessions, Metrics: a.metrics, Now: a.now, Log: a.log,
	})
	oauthFlow, err := oauthflow.New(oauthflow.Deps{
		Providers: a.cfg.Providers, Base: a.base, Secrets: a.cfg.Secrets(),
		CheckCookie: a.names.OAuthCheck, CSRFCookie: a.names.CSRF, Cookies: a.cookies, MaxBodyBytes: a.cfg.MaxBodyBytes,
		HTTPClient: idpClient, Kit: a.kit, Core: a.core, Browser: a.browser, LinkNotice: func(ctx context.Context, u *models.User, p config.Provider) {
			accountPages.TellMethodAdded(ctx, u, p.ID, catalogue.DisplayName(p))
		},
		Now: a.now, Log: a.log,
	})
	if err != nil {
		return err
	}
	a.idps = oauthFlow
	api, err = nextauth.New(nextauth.Deps{
		Kit: a.kit, Log: a.log, Core: a.core, Sessions: a.sessions, Hooks: a.hooks, Providers: a.cfg.Providers,
		Flows: map[string]nextauth.Flow{
			config.TypeOAuth: oauthFlow, config.TypeEmail: emailFlow, config.TypeWebAuthn: passkeys,
		},
		Credentials:    a.credentialsProvider,
		FormPostBounce: oauthFlow.FormPostBounce,
		Metrics:        a.metrics, Pages: a.cfg.Pages, Passkeys: a.passkeys.Offered(),
		SendsMail: a.cfg.SendsMail(), ReportsOIDC: a.dialect.reportsOIDC,
	})
	if err != nil {
		return err
	}
	openAPI, err := a.openAPIDocument(emailFlow.BindingCookie())
	if err != nil {
		return err
	}
	// The feature handlers of their own packages, each given exactly what
	// it uses.
	handlers := []mounter{
		api,
		forwardauth.New(api, access.New(a.cfg.Access), a.proxies, a.policy, a.base.URL("/signin"), a.log),
		ops.New(a.store, a.log, a.base.Path, openAPI, a.theme.css),
		accountPages,
		passkeys,
	}
	if a.echo, err = a.routes(handlers...); err != nil {
		return err
	}
	a.handler = http.HandlerFunc(a.serve)
	return nil
}

// Handler is the whole HTTP service, for tests and embedding.
func (a *App) Handler() http.Handler { return a.handler }

// Base is the parsed public base URL.
func (a *App) Base() config.Base { return a.base }

// Store is the database, for tests and maintenance commands.
func (a *App) Store() *models.Store { return a.store }

// Serve answers requests on l until ctx is cancelled, then shuts down
// gracefully, giving in-flight requests up to 10 seconds. At most
// server.max_connections connections are open at once (further ones wait in
// the kernel's accept queue) and keep-alive connections close after
// server.idle_timeout, so no number of held connections can use up the
// process's file descriptors.
func (a *App) Serve(ctx context.Context, l net.Listener) error {
	if a.cfg.Server.MaxConnections < 1 { // a limit of 0 would never accept anyone
		return fmt.Errorf("serve: server.max_connections is %d; it must be at least 1", a.cfg.Server.MaxConnections)
	}
	l = netutil.LimitListener(l, a.cfg.Server.MaxConnections)
	a.server = &http.Server{
		Handler:           a.handler,
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
	go a.purgeLoop(ctx)
	go a.revocationLoop(ctx)
	go a.idps.Discover(ctx)
	go func() { errc <- a.server.Serve(l) }()
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

// purgeLoop deletes expired sessions and verification tokens, and the
// rate-limit buckets that are full again, at start and then every
// PurgeEvery (hourly). Every instance runs it; the purge is safe at once.
func (a *App) purgeLoop(ctx context.Context) {
	t := time.NewTicker(a.purge)
	defer t.Stop()
	for {
		if n, err := a.store.PurgeExpired(ctx, a.now()); err != nil {
			a.log.Warn("purge expired rows", "err", err)
		} else if n > 0 {
			a.log.Info("purged expired rows", "rows", n)
		}
		if err := a.purgeRevocations(ctx); err != nil {
			a.log.Warn("purge expired rows", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
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
