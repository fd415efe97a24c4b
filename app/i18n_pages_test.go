package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/views"
)

// shippedLangs reads the shipped catalogue once per test binary: a read
// parses every language's file (half a second under -race), and nothing
// changes a catalogue once read.
var shippedLangs = sync.OnceValues(func() (*i18n.Catalog, error) { return i18n.Load(views.Locales(), "", nil) })

// langs is the shipped catalogue, to compare pages with.
func langs(t testing.TB) *i18n.Catalog {
	t.Helper()
	c, err := shippedLangs()
	require.NoError(t, err)
	return c
}

func lang(t *testing.T, tag string) *i18n.Lang {
	t.Helper()
	l, ok := langs(t).Param(tag)
	require.True(t, ok, tag)
	return l
}

// getIn is GET target through c with an Accept-Language header.
func (e *env) getIn(c *http.Client, target, acceptLanguage string) resp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url(target), nil)
	require.NoError(e.t, err)
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	return e.do(c, req)
}

// pageLang is a page's <html lang> and dir, its <title> and <h1>.
func pageLang(t *testing.T, body string) (tag, dir, title, h1 string) {
	t.Helper()
	p := parsePage(t, body)
	walkHTML(p.doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "html":
			tag, _ = htmlAttr(n, "lang")
			dir, _ = htmlAttr(n, "dir")
		case "title":
			title = htmlText(n)
		case "h1":
			if h1 == "" {
				h1 = htmlText(n)
			}
		}
	})
	return tag, dir, title, h1
}

// TestPagesInEveryLanguage: each page, asked for in each shipped language
// with ?lang=, is written in it: <html lang dir>, title and heading from
// that language's catalogue (none of them English, but for English).
func TestPagesInEveryLanguage(t *testing.T) {
	e := startPasswords(t, envOpts{})
	c := e.browser()
	pages := []struct {
		path, title, h1 string
		status          int
	}{
		{"/signin", "TitleSignIn", "SignInHeading", http.StatusOK},
		{"/signout", "TitleSignOut", "SignOutHeading", http.StatusOK},
		{"/error?error=Verification", "TitleError", "VerificationHeading", http.StatusForbidden},
		{"/error?error=Configuration", "TitleError", "ServerErrorHeading", http.StatusInternalServerError},
		{"/verify-request?provider=email&type=email", "TitleVerifyRequest", "CheckEmailHeading", http.StatusOK},
		{"/signup", "TitleSignUp", "SignUpHeading", http.StatusOK},
		{"/reset", "TitleReset", "ResetHeading", http.StatusOK},
	}
	en := langs(t).Default()
	for _, tag := range langs(t).Languages() {
		l := lang(t, tag)
		for _, p := range pages {
			sep := "?"
			if strings.Contains(p.path, "?") {
				sep = "&"
			}
			res := e.get(c, p.path+sep+"lang="+tag)
			require.Equal(t, p.status, res.StatusCode, "%s in %s", p.path, tag)
			gotTag, dir, title, h1 := pageLang(t, res.body)
			require.Equal(t, tag, gotTag, p.path)
			require.Equal(t, l.Dir(), dir, p.path)
			require.Equal(t, l.T(p.title), title, "%s in %s", p.path, tag)
			require.Equal(t, l.T(p.h1), h1, "%s in %s", p.path, tag)
			if tag != "en" {
				require.NotEqual(t, en.T(p.h1)+en.T(p.title), h1+title, "%s in %s is not English", p.path, tag)
			}
		}
	}
	_, dir, _, _ := pageLang(t, e.get(c, "/signin?lang=ar").body)
	require.Equal(t, "rtl", dir)
}

// TestPageLanguageNegotiation: Accept-Language decides unless ?lang=
// names an offered language; bad values of either change nothing but the
// language, and are never reflected.
func TestPageLanguageNegotiation(t *testing.T) {
	e := startPasswords(t, envOpts{})
	c := e.browser()
	for _, tc := range []struct{ query, header, want string }{
		{"", "", "en"},
		{"", "de-CH, fr;q=0.8", "de"},
		{"", "fr;q=0.3, ko;q=0.9", "ko"},
		{"", "pt-PT", "pt-BR"},
		{"", "xx-YY", "en"},
		{"lang=ja", "de", "ja"},
		{"lang=zh-cn", "", "zh-CN"},
		{"lang=xx", "de", "de"},
		{"lang=" + url.QueryEscape("<script>alert(1)</script>"), "", "en"},
		{"lang=" + strings.Repeat("de", 5000), "", "en"},
		{"", strings.Repeat("ja;q=0.9, ", 1100), "en"},
		{"", "de;q=1.5.3", "en"},
	} {
		res := e.getIn(c, "/signin?"+tc.query, tc.header)
		require.Equal(t, http.StatusOK, res.StatusCode, "%.60q %.60q", tc.query, tc.header)
		tag, _, _, _ := pageLang(t, res.body)
		require.Equal(t, tc.want, tag, "%.60q %.60q", tc.query, tc.header)
		require.NotContains(t, res.body, "<script>alert")
	}
	// An explicit, valid lang is carried on by the forms and links; an
	// Accept-Language choice is not (the next request sends it again).
	explicit := parsePage(t, e.getIn(c, "/signin?lang=ja", "de").body)
	for _, f := range explicit.forms() {
		in, ok := f.input("lang")
		require.True(t, ok, "form %s carries lang", f.action)
		require.Equal(t, "ja", in.value)
	}
	body := e.getIn(c, "/signin?lang=ja", "").body
	require.Contains(t, body, `/signup?lang=ja"`)
	require.Contains(t, body, `/reset?lang=ja"`)
	for _, f := range parsePage(t, e.getIn(c, "/signin", "de").body).forms() {
		_, ok := f.input("lang")
		require.False(t, ok)
	}
}

// TestSignInEmailInPageLanguage: the sign-in e-mail is written in the
// language of the page that asked for it: the form's lang, else the
// request's Accept-Language (a client posting without a page).
func TestSignInEmailInPageLanguage(t *testing.T) {
	e := startMail(t, envOpts{})
	c := e.browser()
	host := strings.TrimPrefix(e.origin, "http://")

	res := e.requestLink(c, "ann@example.com", url.Values{"lang": {"fr"}})
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.base+"/verify-request?lang=fr&provider=email&type=email", res.location())
	fr := lang(t, "fr")
	_, m := e.mail(1)
	require.Equal(t, fr.T("SignInEmailSubject", "Host", host), m.Subject)
	require.Contains(t, m.HTML, `<html lang="fr" dir="ltr">`)
	require.Contains(t, m.Text, fr.T("SignInEmailIgnore"))
	require.NotContains(t, m.Text, "If you did not request")
	tag, _, _, _ := pageLang(t, e.get(c, res.location()).body)
	require.Equal(t, "fr", tag, "the verify-request page keeps the language")
	// The link opens its pages in the e-mail's language: the confirm page
	// in another browser, the error page once it is spent.
	link := e.local(e.link(1))
	require.Equal(t, "fr", linkQuery(t, link).Get("lang"))
	tag, _, _, _ = pageLang(t, e.get(e.browser(), link).body)
	require.Equal(t, "fr", tag, "the confirm page")
	require.Equal(t, http.StatusFound, e.get(noRedirects(c), link).StatusCode, "signed in")
	require.Equal(t, e.base+"/error?error=Verification&lang=fr", e.get(noRedirects(e.browser()), link).location(), "spent")

	tok := e.csrf(c)
	req, err := http.NewRequest(http.MethodPost, e.url("/signin/email"), strings.NewReader(url.Values{"csrfToken": {tok}, "email": {"bo@example.com"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", "ar, en;q=0.5")
	res = e.do(noRedirects(c), req)
	require.Equal(t, e.base+"/verify-request?provider=email&type=email", res.location(), "no lang asked for: the wire's URL")
	_, m = e.mail(2)
	require.Equal(t, lang(t, "ar").T("SignInEmailSubject", "Host", host), m.Subject)
	require.Contains(t, m.HTML, `<html lang="ar" dir="rtl">`)
	require.NotContains(t, e.link(2), "lang=", "no lang asked for: next-auth's link")
}

// TestPasswordPagesAndMailInPageLanguage: a sign-up posted from a page in
// Korean answers in Korean and mails in Korean.
func TestPasswordPagesAndMailInPageLanguage(t *testing.T) {
	e := startPasswords(t, envOpts{})
	c := e.browser()
	ko := lang(t, "ko")
	n := e.mailCount()
	res := e.form(c, "/signup", "email", "kim@example.com", "password", "correct horse battery", "lang", "ko")
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	tag, _, _, h1 := pageLang(t, res.body)
	require.Equal(t, "ko", tag)
	require.Equal(t, ko.T("CheckEmailHeading"), h1)
	require.Contains(t, res.body, ko.T("SignUpCheckEmail"))
	_, subject := e.flowLink(n+1, "/signup/verify")
	require.Equal(t, ko.T("SignUpEmailSubject", "Host", strings.TrimPrefix(e.origin, "http://")), subject)

	// A refused password is explained in the page's language.
	res = e.form(c, "/signup", "email", "kim2@example.com", "password", "short", "lang", "ko")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, res.body, ko.T("PasswordTooShort"))

	// The Korean e-mails' links open their pages in Korean: the "you
	// already have an account" mail's reset page, the "no account" reset
	// mail's sign-up page.
	e.addPasswordUser("lee@example.com", goodPassword, true)
	require.Equal(t, http.StatusOK, e.form(c, "/signup", "email", "lee@example.com", "password", "correct horse battery", "lang", "ko").StatusCode)
	require.Contains(t, e.mailAt(e.mailCount()).Text, e.base+"/reset?lang=ko")
	require.Equal(t, http.StatusOK, e.form(c, "/reset", "email", "nobody@example.com", "lang", "ko").StatusCode)
	require.Contains(t, e.mailAt(e.mailCount()).Text, e.base+"/signup?lang=ko")
}

// TestConfiguredPageLanguages: i18n.default and i18n.languages narrow the
// offer; an unknown language stops the start.
func TestConfiguredPageLanguages(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) {
		c.I18n = config.I18n{Default: "de", Languages: []string{"de", "fr", "en"}}
	}})
	c := e.browser()
	for header, want := range map[string]string{"": "de", "ja": "de", "fr-BE": "fr", "en-US": "en", "sw": "de", "tlh": "de", "sw, fr;q=0.8": "fr"} {
		tag, _, _, _ := pageLang(t, e.getIn(c, "/signin", header).body)
		require.Equal(t, want, tag, header)
	}
	tag, _, _, _ := pageLang(t, e.get(c, "/signin?lang=ja").body)
	require.Equal(t, "de", tag, "a language not offered cannot be asked for")
	// Nor one x/text rates a High match for the offered English (sw, tlh):
	// not offered, the default answers, or the request's next preference.
	tag, _, _, _ = pageLang(t, e.get(c, "/signin?lang=sw").body)
	require.Equal(t, "de", tag, "lang=sw")

	cfg := testConfig(t)
	cfg.I18n = config.I18n{Languages: []string{"en", "xx"}}
	_, err := buildApp(cfg)
	require.ErrorContains(t, err, `"xx" has no catalogue`)
}

// TestExplicitLanguageSurvivesRedirects: a page asked for with ?lang= keeps
// its language through the redirects back to latchkey's pages (a refused
// password, a CSRF retry) and through the e-mailed link of a flow; a
// request without lang gets next-auth's redirects unchanged.
func TestExplicitLanguageSurvivesRedirects(t *testing.T) {
	e := startPasswords(t, envOpts{})
	e.signUpFor("ar@example.com", "correct horse battery")
	c := noRedirects(e.browser())
	ar := lang(t, "ar")

	// A wrong password, posted from the Arabic sign-in page.
	res := e.form(c, "/callback/credentials", "email", "ar@example.com", "password", "wrong horse battery", "lang", "ar")
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.base+"/error?error=CredentialsSignin&provider=credentials&lang=ar", res.location())
	res = e.get(c, res.location())
	require.Equal(t, e.base+"/signin?error=CredentialsSignin&lang=ar", res.location())
	page := e.get(c, res.location())
	tag, dir, _, _ := pageLang(t, page.body)
	require.Equal(t, []string{"ar", "rtl"}, []string{tag, dir})
	require.Contains(t, page.body, ar.T("ErrorCredentialsSignin"))
	// The same refusal to Auth.js v5's client (X-Auth-Return-Redirect),
	// whose signIn() goes to url: straight to the sign-in page, in Arabic.
	form := url.Values{"csrfToken": {e.csrf(c)}, "email": {"ar@example.com"}, "password": {"wrong horse battery"}, "lang": {"ar"}}
	res = e.post(c, "/callback/credentials", form, "X-Auth-Return-Redirect", "1")
	require.JSONEq(t, `{"url":"`+e.base+`/signin?code=credentials&error=CredentialsSignin&lang=ar"}`, res.body)

	// A CSRF retry, with and without lang.
	res = e.post(c, "/signin/email", url.Values{"csrfToken": {"forged"}, "email": {"x@example.com"}, "lang": {"ja"}})
	require.Equal(t, e.base+"/signin?csrf=true&lang=ja", res.location())
	res = e.post(c, "/signin/email", url.Values{"csrfToken": {"forged"}, "email": {"x@example.com"}, "lang": {"nonsense"}})
	require.Equal(t, e.base+"/signin?csrf=true", res.location(), "a lang that names nothing offered changes nothing")
	res = e.post(c, "/signin/email", url.Values{"csrfToken": {"forged"}, "email": {"x@example.com"}})
	require.Equal(t, e.base+"/signin?csrf=true", res.location())

	// A reset asked for in Korean: the e-mailed link opens the page in Korean.
	n := e.mailCount()
	require.Equal(t, http.StatusOK, e.form(c, "/reset", "email", "ar@example.com", "lang", "ko").StatusCode)
	link, _ := e.flowLink(n+1, "/reset/confirm")
	_, m := e.mail(n + 1)
	require.Contains(t, m.Text, link+"&lang=ko")
	tag, _, _, _ = pageLang(t, e.get(e.browser(), link+"&lang=ko").body)
	require.Equal(t, "ko", tag)
}

// An OpenID client's ui_locales (OpenID Connect Core §3.1.2.1) chooses the
// language of the pages its authorization request leads to — sign-in,
// consent — the first offered one of its list; a lang parameter (the
// user's own choice on a page) still wins, and a list naming nothing
// offered changes nothing.
func TestOpenIDPagesFollowUILocales(t *testing.T) {
	e := startOP(t, backends()[0], nil)
	r := e.relyingParty("app", rpSecret)
	tagOf := func(res resp) string {
		t.Helper()
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		tag, _, _, _ := pageLang(t, res.body)
		return tag
	}

	page, _ := r.authorize(e.browser(), "ui_locales", "sw-KE de fr")
	require.Equal(t, e.path+"/signin", page.Request.URL.Path)
	require.Equal(t, lang(t, "de").Tag(), tagOf(page), "sign-in page in the first offered of ui_locales")
	require.Contains(t, page.Request.URL.Query().Get("callbackUrl"), "/oidc/continue?")

	c := e.signedIn("ada@example.com")
	page, a := r.authorize(c, "ui_locales", "fr-CA")
	require.Equal(t, lang(t, "fr").Tag(), tagOf(page), "consent page")
	switchTo, err := url.Parse(html.UnescapeString(regexpFind(t, page.body, `href="([^"]*/signin\?[^"]*)"`)))
	require.NoError(t, err)
	require.Equal(t, []string{"fr"}, switchTo.Query()["lang"], "the switch-account link carries lang once")
	_, _, err = r.exchange(r.codeFrom(e.consent(c, page, "allow"), a), a)
	require.NoError(t, err)

	// The logout confirm page follows end_session's ui_locales too, and
	// its form carries the language on.
	page = e.follow(c, "/oidc/end_session?client_id=app&post_logout_redirect_uri="+url.QueryEscape(rpLogout)+"&ui_locales="+url.QueryEscape("sw-KE de"))
	require.Contains(t, page.body, `name="logout"`, "the logout confirm page")
	require.Equal(t, lang(t, "de").Tag(), tagOf(page), "logout page in the first offered of ui_locales")
	require.Contains(t, page.body, `name="lang" value="de"`)
	long := e.get(c, "/oidc/end_session?client_id=app&ui_locales="+url.QueryEscape(strings.Repeat("de fr ", 50)))
	require.Equal(t, http.StatusBadRequest, long.StatusCode, "ui_locales over its limit")
	require.Contains(t, long.body, "invalid_request")

	c = e.signedIn("bob@example.com")
	target, _ := r.authorizeURL("ui_locales", "fr")
	res := e.get(c, target)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Contains(t, res.location(), "/oidc/continue?")
	page = e.get(c, res.location()+"&lang=es")
	require.Equal(t, lang(t, "es").Tag(), tagOf(page), "the user's lang wins")
	// A consent posted with a stale CSRF token shows the page again, in it.
	id := regexpFind(t, page.body, `name="id" value="([0-9a-f]+)"`)
	res = e.post(c, "/oidc/consent", url.Values{"csrfToken": {"stale"}, "id": {id}, "decision": {"allow"}, "lang": {"es"}})
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, lang(t, "es").Tag(), tagOf(e.get(c, res.location())), "the consent page again, in the user's language")
	target, _ = r.authorizeURL("ui_locales", "sw")
	require.Equal(t, lang(t, "en").Tag(), tagOf(e.follow(c, target)), "no ui_locales offered: as before")

	// The user changes the sign-in page's language (ui_locales said de):
	// the consent page after signing in is in the language they chose.
	c = e.browser()
	page, _ = r.authorize(c, "ui_locales", "de")
	q := page.Request.URL.Query()
	q.Set("lang", "fr")
	page = e.get(c, "/signin?"+q.Encode())
	require.Equal(t, lang(t, "fr").Tag(), tagOf(page))
	var form url.Values
	for _, f := range parsePage(t, page.body).forms() {
		if strings.HasSuffix(f.action, "/signin/email") {
			form = url.Values{}
			for _, in := range f.inputs {
				form.Set(in.name, in.value)
			}
		}
	}
	require.NotNil(t, form, "the sign-in page's e-mail form")
	form.Set("email", "cy@example.com")
	res = e.post(c, "/signin/email", form)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	_, m := e.mail(len(e.smtp.Mails()))
	require.Contains(t, m.Text, lang(t, "fr").T("SignInEmailIgnore"), "the link is written in French")
	page = e.follow(c, linkRE.FindString(m.Text))
	require.Contains(t, page.body, `name="decision"`, "the consent page")
	require.Equal(t, lang(t, "fr").Tag(), tagOf(page), "the consent page in the language the user chose")
}

// TestOAuthRoundTripKeepsLanguage: an OAuth sign-in started from a page in
// another language than Accept-Language's comes back from the IdP (which
// carries no lang) in it: the page it returns to, the notice of an
// identity linked, and the error page of a refused callback.
func TestOAuthRoundTripKeepsLanguage(t *testing.T) {
	e := startMail(t, envOpts{}.oidc(nil, nil))
	c := e.browser()
	e.emailSignIn(c, "ada@example.com") // mail 1
	fr := lang(t, "fr")

	// A fresh session links the identity from the French account page: back
	// on it in French, and the notice is in French.
	e.idp.QueueUser(user("ada-idp", "ada@elsewhere.example"))
	res := e.post(e.following(c), "/link-account", url.Values{"csrfToken": {e.csrf(c)}, "provider": {"idp"}, "lang": {"fr"}})
	require.Equal(t, e.base+"/account?lang=fr", res.Request.URL.String())
	tag, _, _, _ := pageLang(t, res.body)
	require.Equal(t, "fr", tag)
	_, p := e.mail(2)
	require.Contains(t, p.Text, fr.T("MethodAddedFooter"), "the link notice")

	// A stale one may not link another: the error page is in French.
	e.clock.Add(11 * time.Minute)
	e.idp.QueueUser(user("mallory", "mallory@evil.example"))
	res = e.post(stopAtError(e.following(c)), "/signin/idp", url.Values{"csrfToken": {e.csrf(c)}, "callbackUrl": {"/home"}, "lang": {"fr"}})
	require.Equal(t, e.base+"/error?error=SessionRequired&lang=fr", res.location())
}
