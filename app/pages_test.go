package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/latchkey-auth/latchkey/app/config"
)

// formInput is one <input> of a form.
type formInput struct {
	typ, name, value, id string
	required             bool
}

// pageForm is one <form> with its inputs.
type pageForm struct {
	action, method string
	inputs         []formInput
	text           string
}

func (f pageForm) input(name string) (formInput, bool) {
	for _, in := range f.inputs {
		if in.name == name {
			return in, true
		}
	}
	return formInput{}, false
}

func htmlAttr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func walkHTML(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkHTML(c, f)
	}
}

func htmlText(n *html.Node) string {
	var b strings.Builder
	walkHTML(n, func(x *html.Node) {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

// parsedPage is a parsed HTML page.
type parsedPage struct {
	doc *html.Node
}

func parsePage(t *testing.T, body string) parsedPage {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	require.NoError(t, err)
	return parsedPage{doc}
}

func (p parsedPage) forms() []pageForm {
	var out []pageForm
	walkHTML(p.doc, func(n *html.Node) {
		if n.Type != html.ElementNode || n.Data != "form" {
			return
		}
		f := pageForm{text: htmlText(n)}
		f.action, _ = htmlAttr(n, "action")
		f.method, _ = htmlAttr(n, "method")
		walkHTML(n, func(x *html.Node) {
			if x.Type != html.ElementNode || x.Data != "input" {
				return
			}
			var in formInput
			in.typ, _ = htmlAttr(x, "type")
			in.name, _ = htmlAttr(x, "name")
			in.value, _ = htmlAttr(x, "value")
			in.id, _ = htmlAttr(x, "id")
			_, in.required = htmlAttr(x, "required")
			f.inputs = append(f.inputs, in)
		})
		out = append(out, f)
	})
	return out
}

// elements returns every element with the tag.
func (p parsedPage) elements(tag string) []*html.Node {
	var out []*html.Node
	walkHTML(p.doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
	})
	return out
}

// byClass returns the text of elements carrying class c.
func (p parsedPage) byClass(c string) []string {
	var out []string
	walkHTML(p.doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if cls, ok := htmlAttr(n, "class"); ok && strings.Contains(" "+cls+" ", " "+c+" ") {
			out = append(out, htmlText(n))
		}
	})
	return out
}

// urls returns every src, href and action attribute value.
func (p parsedPage) urls() []string {
	var out []string
	walkHTML(p.doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "href", "action", "srcset", "formaction", "poster", "data":
				out = append(out, a.Val)
			}
		}
	})
	return out
}

func (p parsedPage) title() string {
	if ts := p.elements("title"); len(ts) > 0 {
		return htmlText(ts[0])
	}
	return ""
}

// requireOwnURLsOnly: no page makes the browser talk to another host.
func requireOwnURLsOnly(t *testing.T, p parsedPage, origin string) {
	t.Helper()
	for _, u := range p.urls() {
		if strings.Contains(strings.ToLower(u), "http") || strings.HasPrefix(u, "//") {
			require.True(t, sameOrigin(u, origin), "page references another host: %q", u)
		}
	}
	require.Empty(t, p.elements("script"), "no scripts")
	require.Empty(t, p.elements("iframe"))
}

func requireHTML(t *testing.T, res resp, status int) parsedPage {
	t.Helper()
	require.Equal(t, status, res.StatusCode, res.body)
	require.Equal(t, "text/html; charset=UTF-8", res.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(res.body, "<!doctype html>") || strings.HasPrefix(res.body, "<!DOCTYPE html>"))
	return parsePage(t, res.body)
}

// jarCSRFToken is the token inside the CSRF cookie the browser holds.
func (e *env) jarCSRFToken(t *testing.T) string {
	t.Helper()
	v, ok := e.jarCookie(e.client, "next-auth.csrf-token")
	require.True(t, ok)
	dec, err := url.QueryUnescape(v)
	require.NoError(t, err)
	tok, hash, ok := strings.Cut(dec, "|")
	require.True(t, ok)
	require.Equal(t, csrfHash(tok, testSecret), hash)
	return tok
}

func TestSignInPage(t *testing.T) {
	e := startEnv(t, envOpts{config: threeProviders})
	res := e.get(e.client, "/signin")
	p := requireHTML(t, res, http.StatusOK)
	require.Equal(t, "Sign In", p.title())
	require.Empty(t, p.byClass("error"), "no error box without ?error=")
	token := e.jarCSRFToken(t)

	forms := p.forms()
	require.Len(t, forms, 3, "one form per provider")
	for i, id := range []string{"github", "email", "google"} {
		f := forms[i]
		require.Equal(t, e.base+"/signin/"+id, f.action, "form %d posts to the provider's signinUrl", i)
		require.Equal(t, "post", strings.ToLower(f.method))
		csrf, ok := f.input("csrfToken")
		require.True(t, ok)
		require.Equal(t, "hidden", csrf.typ)
		require.Equal(t, token, csrf.value, "hidden csrfToken equals the cookie's token")
		if id != "email" {
			cb, ok := f.input("callbackUrl")
			require.True(t, ok)
			require.Equal(t, "hidden", cb.typ)
			require.Equal(t, "http://localhost:3000", cb.value, "default callbackUrl is the origin")
		}
	}
	require.Contains(t, forms[0].text, "Sign in with GitHub")
	require.Contains(t, forms[2].text, "Sign in with Google Workspace")

	email, ok := forms[1].input("email")
	require.True(t, ok, "the e-mail form has an email input")
	require.Equal(t, "email", email.typ)
	require.True(t, email.required)
	require.Equal(t, "input-email-for-email-provider", email.id)
	require.Contains(t, forms[1].text, "Sign in with Email")

	requireOwnURLsOnly(t, p, e.origin)

	// The form works: posting it as a browser would gets past the CSRF check.
	form := url.Values{}
	for _, in := range forms[1].inputs {
		form.Set(in.name, in.value)
	}
	form.Set("email", "user@example.com")
	post := e.post(e.client, strings.TrimPrefix(forms[1].action, e.base), form)
	require.NotEqual(t, e.base+"/signin?csrf=true", post.Header.Get("Location"))

	// v4 quirk: GET /signin/{id} shows the same page.
	p = requireHTML(t, e.get(e.client, "/signin/github"), http.StatusOK)
	require.Len(t, p.forms(), 3)
}

func TestSignInPageQuery(t *testing.T) {
	e := startEnv(t, envOpts{config: threeProviders})
	p := requireHTML(t, e.get(e.client, "/signin?callbackUrl=%2Fdashboard&email=pre%40example.com"), http.StatusOK)
	forms := p.forms()
	cb, _ := forms[0].input("callbackUrl")
	require.Equal(t, "http://localhost:3000/dashboard", cb.value)
	email, _ := forms[1].input("email")
	require.Equal(t, "pre@example.com", email.value, "pre-filled from ?email=")

	// A hostile callbackUrl is not reflected.
	p = requireHTML(t, e.get(e.client, "/signin?callbackUrl=https%3A%2F%2Fevil.test%2Fx"), http.StatusOK)
	cb, _ = p.forms()[0].input("callbackUrl")
	require.Equal(t, "http://localhost:3000", cb.value)

	// Markup in the query is escaped, never interpreted.
	res := e.get(e.client, "/signin?email=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&error=%3Cscript%3E")
	p = requireHTML(t, res, http.StatusOK)
	require.NotContains(t, res.body, "<script>alert(1)")
	require.Empty(t, p.elements("script"))
	email, _ = p.forms()[1].input("email")
	require.Equal(t, `"><script>alert(1)</script>`, email.value)
}

func TestSignInErrorMessages(t *testing.T) {
	table := map[string]string{
		"Signin":                "Try signing in with a different account.",
		"OAuthSignin":           "Try signing in with a different account.",
		"OAuthCallback":         "Try signing in with a different account.",
		"OAuthCreateAccount":    "Try signing in with a different account.",
		"EmailCreateAccount":    "Try signing in with a different account.",
		"Callback":              "Try signing in with a different account.",
		"OAuthAccountNotLinked": "To confirm your identity, sign in with the same account you used originally.",
		"EmailSignin":           "The e-mail could not be sent.",
		"CredentialsSignin":     "Sign in failed. Check the details you provided are correct.",
		"SessionRequired":       "Please sign in to access this page.",
		"default":               "Unable to sign in.",
		"Verification":          "Unable to sign in.",
		"SomethingElse":         "Unable to sign in.",
		"<b>x</b>":              "Unable to sign in.",
	}
	e := startEnv(t, envOpts{})
	for code, msg := range table {
		res := e.get(e.client, "/signin?error="+url.QueryEscape(code))
		p := requireHTML(t, res, http.StatusOK)
		require.Equal(t, []string{msg}, p.byClass("error"), code)
		require.NotContains(t, res.body, "<b>x</b>")
	}
}

func TestSignOutPage(t *testing.T) {
	e := startEnv(t, envOpts{})
	p := requireHTML(t, e.get(e.client, "/signout"), http.StatusOK)
	require.Equal(t, "Sign Out", p.title())
	forms := p.forms()
	require.Len(t, forms, 1)
	require.Equal(t, e.base+"/signout", forms[0].action)
	require.Equal(t, "post", strings.ToLower(forms[0].method))
	csrf, ok := forms[0].input("csrfToken")
	require.True(t, ok)
	require.Equal(t, "hidden", csrf.typ)
	require.Equal(t, e.jarCSRFToken(t), csrf.value)
	require.Contains(t, forms[0].text, "Sign out")
	requireOwnURLsOnly(t, p, e.origin)

	// After a failed CSRF check the page explains why.
	p = requireHTML(t, e.get(e.client, "/signout?csrf=true"), http.StatusOK)
	require.Len(t, p.byClass("error"), 1)
}

func TestErrorPage(t *testing.T) {
	e := startEnv(t, envOpts{})
	cases := []struct {
		code    string
		status  int
		heading string
		signIn  bool
	}{
		{"Configuration", http.StatusInternalServerError, "Server error", false},
		{"configuration", http.StatusInternalServerError, "Server error", false}, // v4 lower-cases the code
		{"AccessDenied", http.StatusForbidden, "Access Denied", true},
		{"Verification", http.StatusForbidden, "Unable to sign in", true},
		{"Default", http.StatusOK, "Error", false},
		{"Whatever", http.StatusOK, "Error", false},
		{"", http.StatusOK, "Error", false},
		{"<script>alert(1)</script>", http.StatusOK, "Error", false},
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			res := e.get(e.client, "/error?error="+url.QueryEscape(tc.code))
			p := requireHTML(t, res, tc.status)
			require.Equal(t, "Error", p.title())
			h1 := p.elements("h1")
			require.Len(t, h1, 1)
			require.Equal(t, tc.heading, htmlText(h1[0]))
			requireOwnURLsOnly(t, p, e.origin)
			require.NotContains(t, res.body, "<script>alert")
			var links []string
			for _, a := range p.elements("a") {
				href, _ := htmlAttr(a, "href")
				links = append(links, href)
			}
			if tc.signIn {
				require.Contains(t, links, e.base+"/signin")
			} else {
				require.Contains(t, links, "http://localhost:3000", "a link back to the site")
			}
		})
	}
	text := htmlText(parsePage(t, e.get(e.client, "/error?error=Configuration").body).doc)
	require.Contains(t, text, "There is a problem with the server configuration.")
	require.Contains(t, text, "Check the server logs for more information.")
	text = htmlText(parsePage(t, e.get(e.client, "/error?error=AccessDenied").body).doc)
	require.Contains(t, text, "You do not have permission to sign in.")
	text = htmlText(parsePage(t, e.get(e.client, "/error?error=Verification").body).doc)
	require.Contains(t, text, "The sign in link is no longer valid.")
	require.Contains(t, text, "It may have been used already or it may have expired.")
}

func TestErrorPageBouncesSignInCodes(t *testing.T) {
	e := startEnv(t, envOpts{})
	for _, code := range []string{"Signin", "OAuthSignin", "OAuthCallback", "OAuthCreateAccount", "EmailCreateAccount",
		"Callback", "OAuthAccountNotLinked", "EmailSignin", "CredentialsSignin", "SessionRequired"} {
		res := e.get(e.client, "/error?error="+code)
		require.Equal(t, http.StatusFound, res.StatusCode, code)
		require.Equal(t, e.base+"/signin?error="+code, res.Header.Get("Location"))
	}
}

func TestVerifyRequestPage(t *testing.T) {
	e := startEnv(t, envOpts{})
	p := requireHTML(t, e.get(e.client, "/verify-request?provider=email&type=email"), http.StatusOK)
	require.Equal(t, "Verify Request", p.title())
	require.Equal(t, "Check your email", htmlText(p.elements("h1")[0]))
	require.Contains(t, htmlText(p.doc), "A sign in link has been sent to your email address.")
	requireOwnURLsOnly(t, p, e.origin)
	var links []string
	for _, a := range p.elements("a") {
		href, _ := htmlAttr(a, "href")
		links = append(links, href)
	}
	require.Equal(t, []string{"http://localhost:3000"}, links)
}

func TestStaticCSS(t *testing.T) {
	e := startEnv(t, envOpts{})
	p := requireHTML(t, e.get(e.client, "/signin"), http.StatusOK)
	var sheets []string
	for _, l := range p.elements("link") {
		if rel, _ := htmlAttr(l, "rel"); rel == "stylesheet" {
			href, _ := htmlAttr(l, "href")
			sheets = append(sheets, href)
		}
	}
	require.Equal(t, []string{"/api/auth/static/style.css", "/api/auth/static/dark.css"}, sheets)
	res := e.rawDo(http.MethodGet, "/static/style.css", "", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/css"))
	require.Contains(t, res.body, "color-scheme")
	require.Empty(t, res.Header.Values("Set-Cookie"))

	for _, bad := range []string{"/static/nope.css", "/static/../config.yaml", "/static/%2e%2e/main.go", "/static/"} {
		res := e.rawDo(http.MethodGet, bad, "", nil)
		require.NotEqual(t, http.StatusOK, res.StatusCode, bad)
		require.Less(t, res.StatusCode, 500, bad)
	}
}

func TestCustomPages(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) {
		c.Pages = config.Pages{SignIn: "/login", SignOut: "/logout", Error: "/oops?x=1", VerifyRequest: "/check"}
	}})
	res := e.get(e.client, "/signin?error=OAuthSignin&callbackUrl=%2Fdash")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "/login?callbackUrl=http%3A%2F%2Flocalhost%3A3000%2Fdash&error=OAuthSignin", res.Header.Get("Location"))
	res = e.get(e.client, "/signout")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "/logout", res.Header.Get("Location"))
	res = e.get(e.client, "/error?error=AccessDenied")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "/oops?x=1&error=AccessDenied", res.Header.Get("Location"))
	res = e.get(e.client, "/verify-request?provider=email&type=email")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "/check", res.Header.Get("Location"), "v4 drops the query")
}
