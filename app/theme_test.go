package app_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// brandTheme is a theme as an operator coming from next-auth writes it.
var brandTheme = config.Theme{ColorScheme: "dark", BrandColor: "#0a7f5a", Logo: "https://cdn.example.com/brand/logo.svg", ButtonText: "#fffff0"}

// themedPages are the built-in pages every theme reaches.
var themedPages = []string{"/signin", "/signout", "/error?error=AccessDenied", "/verify-request?provider=email&type=email"}

// pageTheme is what a page shows of the theme: its stylesheets, logos,
// the media of its dark stylesheet and whether anything is styled inline
// (the CSP forbids it).
type pageTheme struct {
	stylesheets, logos []string
	darkMedia          string
	inline             bool
}

func themeOf(t *testing.T, body string) pageTheme {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	require.NoError(t, err)
	var p pageTheme
	walkHTML(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if _, ok := htmlAttr(n, "style"); ok || n.Data == "style" {
			p.inline = true
		}
		switch n.Data {
		case "link":
			if href, _ := htmlAttr(n, "href"); href != "" {
				p.stylesheets = append(p.stylesheets, href)
				if strings.HasSuffix(href, "/dark.css") {
					p.darkMedia, _ = htmlAttr(n, "media")
				}
			}
		case "img":
			if c, _ := htmlAttr(n, "class"); c == "logo" {
				src, _ := htmlAttr(n, "src")
				p.logos = append(p.logos, src)
			}
		}
	})
	return p
}

// Every page links the generated theme stylesheet after style.css, shows
// the logo and forces the configured scheme, with nothing inline; the CSP
// lets images come from the logo's origin and from nowhere else new.
func TestThemeOnEveryPage(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) { c.Theme = brandTheme }})
	for _, target := range themedPages {
		res := e.get(e.browser(), target)
		p := themeOf(t, res.body)
		require.Equal(t, []string{e.path + "/static/style.css", e.path + "/static/dark.css", e.path + "/theme.css"}, p.stylesheets, target)
		require.Equal(t, []string{brandTheme.Logo}, p.logos, target)
		require.Equal(t, "all", p.darkMedia, "%s: color_scheme dark: always dark", target)
		require.False(t, p.inline, "%s: no inline style", target)
		d := cspDirectives(t, res.Header.Get("Content-Security-Policy"))
		require.Equal(t, []string{"'self'", "https://cdn.example.com"}, d["img-src"], target)
		require.Equal(t, []string{"'self'"}, d["style-src"], target)
		require.Equal(t, []string{"'none'"}, d["default-src"], target)
	}
	css := e.get(e.browser(), "/theme.css")
	require.Equal(t, 200, css.StatusCode)
	require.Equal(t, "text/css; charset=utf-8", css.Header.Get("Content-Type"))
	require.Equal(t, "public, max-age=3600", css.Header.Get("Cache-Control"))
	require.Contains(t, css.body, "--accent: #0a7f5a;")
	require.Contains(t, css.body, "--accent-text: #fffff0;")
	require.Empty(t, css.Header.Values("Set-Cookie"))
}

// Without a theme the pages are as before: no extra stylesheet, no logo,
// images from latchkey only. A logo served by latchkey adds no origin.
func TestThemeDefaultsAndSameOriginLogo(t *testing.T) {
	e := startEnv(t, envOpts{})
	res := e.get(e.browser(), "/signin")
	p := themeOf(t, res.body)
	require.Equal(t, []string{e.path + "/static/style.css", e.path + "/static/dark.css"}, p.stylesheets)
	require.Empty(t, p.logos)
	require.Equal(t, "(prefers-color-scheme: dark)", p.darkMedia, "auto: the browser's preference")
	require.Equal(t, []string{"'self'"}, cspDirectives(t, res.Header.Get("Content-Security-Policy"))["img-src"])
	require.NotContains(t, e.get(e.browser(), "/theme.css").body, "--accent")

	e = startEnv(t, envOpts{ownURL: true, config: func(c *config.Config) {
		c.Theme = config.Theme{Logo: "/api/auth/static/logo.svg", ColorScheme: "light"}
	}})
	res = e.get(e.browser(), "/signin")
	p = themeOf(t, res.body)
	require.Equal(t, []string{"/api/auth/static/logo.svg"}, p.logos)
	require.Equal(t, []string{e.path + "/static/style.css"}, p.stylesheets, "light: no dark stylesheet; no colours: no theme stylesheet")
	require.Equal(t, []string{"'self'"}, cspDirectives(t, res.Header.Get("Content-Security-Policy"))["img-src"])

	// A brand colour alone keeps next-auth's white button text, in the
	// dark scheme too.
	e = startEnv(t, envOpts{config: func(c *config.Config) { c.Theme = config.Theme{BrandColor: "navy"} }})
	css := e.get(e.browser(), "/theme.css").body
	require.Contains(t, css, "--accent: navy;")
	require.Contains(t, css, "--accent-text: #fff;")
}

// Defence in depth: a hostile theme that skipped check-config (app.New
// given the config as is) reaches no page, stylesheet, CSP or e-mail.
func TestThemeHostileValuesNeverRendered(t *testing.T) {
	cfg := testConfig(t)
	cfg.Theme = config.Theme{
		ColorScheme: `dark" onload="x`,
		BrandColor:  "red;}</style><script>alert(1)</script>",
		ButtonText:  `#fff" onmouseover="alert(1)`,
		Logo:        "javascript:alert(1)",
	}
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	for _, target := range append(themedPages, "/theme.css") {
		res, err := srv.Client().Get(srv.URL + "/api/auth" + target)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		p := themeOf(t, string(body))
		require.Empty(t, p.logos, target)
		if target != "/theme.css" {
			require.Equal(t, "(prefers-color-scheme: dark)", p.darkMedia, "%s: a bad color_scheme is auto", target)
		}
		require.False(t, p.inline, target)
		for _, bad := range []string{"alert", "javascript:", "onload", "onmouseover", "</style>"} {
			require.NotContains(t, string(body), bad, target)
			require.NotContains(t, res.Header.Get("Content-Security-Policy"), bad, target)
		}
	}
}

// The sign-in e-mail's button and link take the brand colour and the
// button its text colour, as next-auth's; without a theme, next-auth's
// default blue.
func TestThemeInSignInEmail(t *testing.T) {
	e := startMail(t, envOpts{config: func(c *config.Config) { c.Theme = brandTheme }})
	e.emailLink(e.browser(), "alice@example.com", e.origin+"/")
	_, msg := e.mail(1)
	require.Contains(t, msg.HTML, `bgcolor="#0a7f5a"`)
	require.Contains(t, msg.HTML, "color: #fffff0;")
	require.Contains(t, msg.HTML, "border: 1px solid #0a7f5a;")
	require.Contains(t, msg.HTML, "color: #0a7f5a; word-break: break-all;")
	require.NotContains(t, msg.HTML, "#346df1")

	e = startMail(t, envOpts{})
	e.emailLink(e.browser(), "alice@example.com", e.origin+"/")
	_, msg = e.mail(1)
	require.Contains(t, msg.HTML, `bgcolor="#346df1"`)
	require.Contains(t, msg.HTML, "color: #fff;")
}

// The password flows' e-mails take the same colours as the sign-in e-mail.
func TestThemeInPasswordEmails(t *testing.T) {
	e := startPasswords(t, envOpts{config: func(c *config.Config) { c.Theme = brandTheme }})
	n := e.mailCount()
	res := e.form(e.browser(), "/signup", "email", "new@example.com", "password", "correct horse battery")
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	_, msg := e.mail(n + 1)
	require.Contains(t, msg.HTML, `bgcolor="#0a7f5a"`)
	require.Contains(t, msg.HTML, "color: #fffff0;")
	require.Contains(t, msg.HTML, "color: #0a7f5a; word-break: break-all;")
	require.NotContains(t, msg.HTML, "#346df1")
}
