package app

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

// securityHeaders sets on every response (pages, JSON, redirects, errors,
// the stylesheet, forward-auth) the headers that keep latchkey out of other
// sites' frames and stop browsers from sniffing a JSON or text answer into
// HTML, and under an https SERVICE_URL Strict-Transport-Security. The
// Referrer-Policy and the Content-Security-Policy follow when the answer's
// head is written (documentPolicy).
//
// Strict-Transport-Security goes on JSON answers too: a front end that
// only calls GET /session (the next-auth client) may be all a browser ever
// fetches from latchkey's host. It is a ninth header name on a first
// visit's GET /session (see documentPolicy for what that costs), paid only
// under https: over http f.hsts is nil and nothing is added.
//
// The values are shared, pre-built slices stored under their canonical
// keys: Header.Set would allocate a slice per header per response. Nothing
// may write into a header's value slice in place (net/http's Header methods
// never do; Add appends past a full slice, which copies).
func (f *front) securityHeaders(h http.Header) {
	h["X-Frame-Options"] = xFrameOptions
	h["X-Content-Type-Options"] = xContentTypeOptions
	if f.hsts != nil {
		h["Strict-Transport-Security"] = f.hsts
	}
}

// documentPolicy completes the head of an answer that is about to be
// written with the headers that matter only to what a browser renders or
// follows, unless the answer is JSON:
//   - Referrer-Policy: no-referrer, which keeps latchkey's URLs, whose
//     queries can carry e-mail tokens, out of the Referer of the requests a
//     page makes and of the next hop of a redirect;
//   - the Content-Security-Policy, written for the pages (see
//     contentSecurityPolicy), unless the route answers without a body
//     (forward-auth; rt may be nil: no route took the request). Redirects,
//     errors, the stylesheet, the logo (SVG is a document that could run
//     script) and an answer of unknown type get it too;
//   - with the CSP, Cross-Origin-Opener-Policy: same-origin, so a site
//     that opens a latchkey page in a window keeps no handle on it (to
//     navigate it, count its frames, or learn when it closes), unless the
//     route kept the opener (web.KeepOpener: a sign-in journey's page,
//     which an app may open in a popup and wait on; routeTag.keepOpener:
//     the OpenID Provider's endpoints, whose redirects are hops of one —
//     browsers weigh a redirect's COOP too);
//   - with the CSP, a Permissions-Policy that turns off what no page uses
//     (camera, microphone, location, payment, ...) for the page and for
//     anything it could ever frame; passkeys stay latchkey's own
//     (publickey-credentials-get and -create: self), off when none are
//     offered.
//
// A JSON answer never runs anything and leads nowhere: nosniff keeps it
// from being read as HTML or script, and X-Frame-Options: DENY keeps it out
// of frames in every browser; it makes no requests a Referer could go with.
// Each of these headers would be one more header name on GET /session and
// /csrf, where net/http's header map outgrows its first eight slots and
// every answer then pays for a bigger map and its copy (about a fifth of a
// signed-in GET /session in process).
func (f *front) documentPolicy(h http.Header, rt *routeTag) {
	if ct := h["Content-Type"]; len(ct) > 0 && isJSON(ct[0]) {
		return
	}
	h["Referrer-Policy"] = referrerPolicy
	if rt != nil && rt.bodiless {
		return
	}
	h["Content-Security-Policy"] = f.cspHeader()
	if _, kept := h[web.HeaderCOOP]; !kept && (rt == nil || !rt.keepOpener) {
		h[web.HeaderCOOP] = coopSameOrigin
	}
	if f.passkeys {
		h["Permissions-Policy"] = permissionsWithPasskeys
	} else {
		h["Permissions-Policy"] = permissionsNone
	}
}

// isJSON reports whether a Content-Type value is application/json, with
// or without parameters.
func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), echo.MIMEApplicationJSON)
}

// The constant security header values, each a full slice (len == cap).
var (
	xFrameOptions       = web.HeaderValue("DENY")
	xContentTypeOptions = web.HeaderValue("nosniff")
	referrerPolicy      = web.HeaderValue("no-referrer")
	coopSameOrigin      = web.HeaderValue("same-origin")
	// The pages use none of these; passkeys (WebAuthn) only when offered,
	// and then only on latchkey's own origin.
	permissionsNone         = web.HeaderValue(permissionsOff + ", publickey-credentials-get=(), publickey-credentials-create=()")
	permissionsWithPasskeys = web.HeaderValue(permissionsOff + ", publickey-credentials-get=(self), publickey-credentials-create=(self)")
)

// permissionsOff are the powerful features no latchkey page uses.
const permissionsOff = "accelerometer=(), autoplay=(), bluetooth=(), browsing-topics=(), camera=(), display-capture=(), " +
	"encrypted-media=(), fullscreen=(), geolocation=(), gyroscope=(), hid=(), identity-credentials-get=(), idle-detection=(), " +
	"magnetometer=(), microphone=(), midi=(), otp-credentials=(), payment=(), picture-in-picture=(), screen-wake-lock=(), " +
	"serial=(), usb=(), xr-spatial-tracking=()"

// cspCache holds the Content-Security-Policy header value once it can no
// longer change.
type cspCache struct{ final atomic.Pointer[[]string] }

// cspHeader is the Content-Security-Policy header value: built once when it
// is final, on every call until then (OIDC discovery still to run).
func (f *front) cspHeader() []string {
	if p := f.csp.final.Load(); p != nil {
		return *p
	}
	p, final := f.contentSecurityPolicy()
	v := web.HeaderValue(p)
	if final {
		f.csp.final.Store(&v)
	}
	return v
}

// contentSecurityPolicy allows a page its own stylesheet and favicon and
// nothing else: no scripts, inline styles, frames, plugins or connections,
// no <base> to re-point its links, and no site may frame it
// (clickjacking the sign-in and sign-out buttons). form-action lists every
// origin a form's POST may end up on through redirects, which Chromium
// checks hop by hop: see formActionOrigins.
func (f *front) contentSecurityPolicy() (policy string, final bool) {
	origins, final := f.formActionOrigins()
	scripts := ""
	if f.passkeys {
		// Passkeys need latchkey's own script (static/passkeys.js) and
		// its fetches to latchkey: nothing inline, nothing elsewhere.
		scripts = "script-src 'self'; connect-src 'self'; "
	}
	return "default-src 'none'; " + scripts + "style-src 'self'; img-src " + imgSources(f.imgOrigin) + "; base-uri 'none'; form-action " +
		strings.Join(append([]string{"'self'"}, origins...), " ") + "; frame-ancestors 'none'", final
}

// imgSources is img-src: latchkey's own origin, and the theme's logo's
// origin when the logo is an https URL elsewhere.
func imgSources(logoOrigin string) string {
	if logoOrigin == "" {
		return "'self'"
	}
	return "'self' " + logoOrigin
}

// identityProviders are the OAuth and OIDC providers as the pages'
// headers and start-up see them (app/oauthflow).
type identityProviders interface {
	// SignInURLs are where their sign-in redirects may send the browser;
	// final is false until OIDC discovery has run.
	SignInURLs() (urls []string, final bool)
	// Discover runs OIDC discovery ahead of the first sign-in.
	Discover(ctx context.Context)
}

// formActionOrigins are the origins a form on a latchkey page may reach by
// its POST and the redirects that answer it:
//   - the service's own origin (also 'self', but the browser may know
//     latchkey under another name than SERVICE_URL, and every redirect
//     names SERVICE_URL's origin);
//   - each OAuth provider's authorization endpoint (sign-in's 302); for
//     generic OIDC the issuer's origin, plus the discovered endpoint's
//     origin once discovery has run (final is false until then);
//   - the allowed redirect origins (sign-out, the e-mail confirm page and
//     any failure can redirect to a callbackUrl there);
//   - the origins of custom pages given as absolute URLs (errors, verify
//     request, new user);
//   - with the OpenID Provider on, its clients' redirect and post-logout
//     URIs (a consent, a sign-in for a waiting request or a logout ends
//     there); re-read, so the policy is never final.
//
// A chain of redirects through origins none of these names (an IdP whose
// authorization endpoint bounces the browser on to another of its domains
// before showing a page) is still refused by Chromium.
func (f *front) formActionOrigins() (origins []string, final bool) {
	seen := map[string]bool{}
	add := func(raw string) {
		if o, ok := cspOrigin(raw); ok && !seen[o] {
			seen[o] = true
			origins = append(origins, o)
		}
	}
	add(f.origin)
	urls, final := f.idps.SignInURLs()
	for _, u := range urls {
		add(u)
	}
	for _, o := range f.allowedOrigins {
		add(o)
	}
	pg := f.pages
	for _, u := range []string{pg.SignIn, pg.SignOut, pg.Error, pg.VerifyRequest, pg.NewUser} {
		add(u) // relative paths are 'self' and add nothing
	}
	if f.clientURIs != nil {
		for _, u := range f.clientURIs() {
			for _, src := range clientSources(u) {
				if !seen[src] {
					seen[src] = true
					origins = append(origins, src)
				}
			}
		}
		final = false // an admin may add a client at any time
	}
	return origins, final
}

// clientSources are the form-action sources of an OpenID client's redirect
// or post-logout URI: its origin; for a loopback host, that host on any
// port, where a native app's answer goes (the library matches its loopback
// URIs on any port, RFC 8252 §7.3); for a private-use scheme
// (com.example.app:/cb), the scheme. Chromium checks form-action on the
// last hop too, a custom scheme included (the consent page's POST ends
// there).
func clientSources(raw string) []string {
	if u, o, ok := parseOrigin(raw); ok {
		if h := strings.ToLower(u.Hostname()); h == "localhost" || h == "127.0.0.1" {
			return []string{o, strings.ToLower(u.Scheme) + "://" + h + ":*"}
		}
		return []string{o}
	}
	scheme, _, ok := strings.Cut(strings.TrimSpace(raw), ":")
	scheme = strings.ToLower(scheme)
	switch {
	case !ok || !cspScheme.MatchString(scheme):
		return nil
	case scheme == "http" || scheme == "https" || scheme == "javascript" || scheme == "data" || scheme == "blob" || scheme == "filesystem":
		return nil // never a whole web scheme, nor one that runs or holds content
	}
	return []string{scheme + ":"}
}

// cspScheme is a URI scheme (RFC 3986 §3.1) as a CSP scheme source has
// it: nothing that could end the source or the directive.
var cspScheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// cspHost is a host[:port] that is safe inside a CSP source expression: an
// IdP's discovery document is not allowed to add directives with ";" or
// spaces. A CSP host-source is names and dots only (CSP3 host-char):
// browsers report a bracketed IPv6 literal (http://[::1]:8080) as an
// invalid source and ignore it, so none is written. A form that ends on
// such an origin is refused by Chromium whatever the policy says
// (docs/security.md).
var cspHost = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)*\.?(:[0-9]{1,5})?$`)

// cspOrigin is the scheme://host[:port] of an absolute http(s) URL, as a CSP
// source expression; false for anything else.
func cspOrigin(raw string) (string, bool) {
	_, o, ok := parseOrigin(raw)
	return o, ok
}

// parseOrigin is cspOrigin with the parsed URL.
func parseOrigin(raw string) (*url.URL, string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if (scheme != "http" && scheme != "https") || !cspHost.MatchString(host) {
		return nil, "", false
	}
	return u, scheme + "://" + host, true
}
