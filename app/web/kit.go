package web

import (
	"log/slog"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/csrf"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/redirect"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// Kit is what every handler's requests and answers share, built once by
// the app: next-auth's request init (the CSRF cookie, the body, the
// callback URL), redirects through the redirect policy, the pages' layout
// in the request's language, and the one adapter that turns a failure
// into its answer (Fail). It holds no feature's state.
type Kit struct {
	base      config.Base
	log       *slog.Logger
	names     cookies.Names
	cookies   cookies.Writer
	csrf      csrf.Signer
	policy    redirect.Policy
	hook      func(target, origin string) string // the operator's Redirect hook
	langs     *i18n.Catalog
	theme     views.Theme
	maxBody   int64
	onFailure func(c echo.Context, code signin.Code)
	onSignIn  func(provider string)
	newUser   string // pages.new_user
	// ownText are the route patterns (with the base path, as c.Path())
	// whose handlers answer values that are not text themselves
	// (KitConfig.OwnTextRoutes).
	ownText map[string]bool

	// originCallback is the callback-url cookie naming the service origin,
	// which every first visit is given (initRequest).
	originCallback cookies.Line
	// csrfCookie is the CSRF cookie's line, prepared for new tokens (IssueCSRF).
	csrfCookie  cookies.HexPair
	requests    sync.Pool // *Request, one per action in flight (WithRequest)
	jsonBuffers sync.Pool // GET /session's and /csrf's bodies while written (SendBuilt)
}

// KitConfig is what NewKit builds the kit from.
type KitConfig struct {
	Base    config.Base
	Log     *slog.Logger
	Names   cookies.Names
	Cookies cookies.Writer
	CSRF    csrf.Signer
	Policy  redirect.Policy
	// RedirectHook is the operator's Redirect hook (signin.Hooks.Redirect),
	// asked before the policy, which has the last word.
	RedirectHook func(target, origin string) string
	Langs        *i18n.Catalog
	Theme        views.Theme // the pages' theme
	MaxBodyBytes int64
	// OnFailure is told every failure Fail answers with its code (the
	// sign-in outcome metrics); nil: nobody.
	OnFailure func(c echo.Context, code signin.Code)
	// OnSignIn is told every completed sign-in's provider (the metrics).
	OnSignIn func(provider string)
	// NewUserPage is pages.new_user: where a new user goes first.
	NewUserPage string
	// OwnTextRoutes are route patterns below the base path whose handlers
	// answer a value that is not text (a NUL byte, invalid UTF-8)
	// themselves, with a documented answer of their own (next-auth's
	// error codes), having made sure no such value reaches the database;
	// every other route's request init refuses it with 400.
	OwnTextRoutes []string
}

// NewKit builds the kit.
func NewKit(kc KitConfig) *Kit {
	k := &Kit{
		base: kc.Base, log: kc.Log, names: kc.Names, cookies: kc.Cookies, csrf: kc.CSRF, policy: kc.Policy,
		hook: kc.RedirectHook, langs: kc.Langs, theme: kc.Theme, maxBody: kc.MaxBodyBytes, onFailure: kc.OnFailure,
		onSignIn: kc.OnSignIn, newUser: kc.NewUserPage,
	}
	k.ownText = make(map[string]bool, len(kc.OwnTextRoutes))
	for _, r := range kc.OwnTextRoutes {
		k.ownText[k.base.Path+r] = true
	}
	if k.hook == nil {
		k.hook = func(target, _ string) string { return target }
	}
	k.originCallback = k.cookies.Prepare(k.names.CallbackURL, k.policy.Origin())
	k.csrfCookie = k.cookies.PrepareHexPair(k.names.CSRF, '|')
	k.requests.New = func() any { return new(Request) }
	k.jsonBuffers.New = func() any {
		b := make([]byte, 0, 512)
		return &b
	}
	return k
}

// Base is the service's public base URL.
func (k *Kit) Base() config.Base { return k.base }

// Origin is the origin redirects fall back to (the service's, or the
// policy's own).
func (k *Kit) Origin() string { return k.policy.Origin() }
