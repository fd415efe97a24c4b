package views_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/views"
)

var allScopes = []string{"ScopeOpenID", "ScopeProfile", "ScopeEmail", "ScopeGroups", "ScopeOfflineAccess"}

func sampleConsent(t *testing.T, tag string) views.OpenIDConsent {
	return views.OpenIDConsent{
		Page: page(t, tag, "TitleOpenIDConsent"), CSRFToken: "csrf-123", ActionURL: "/api/auth/oidc/consent",
		RequestID: "req-42", ClientName: "Wiki", ClientHost: "wiki.example.com", Scopes: allScopes,
		Account: "ann@example.com", ShownTo: "user-7", SwitchURL: "/api/auth/signin?callbackUrl=%2Fapi%2Fauth%2Foidc%2Fauthorize%3Fid%3Dreq-42",
	}
}

func TestOpenIDConsentPage(t *testing.T) {
	en := lang(t, "en")
	d := sampleConsent(t, "en")
	out := render(t, views.OpenIDConsentPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		"<title>" + en.T("TitleOpenIDConsent") + "</title>", "<h1>" + en.T("OpenIDConsentHeading", "Client", "Wiki") + "</h1>",
		"<strong>ann@example.com</strong>", en.T("OpenIDConsentSwitch"),
		`href="/api/auth/signin?callbackUrl=%2Fapi%2Fauth%2Foidc%2Fauthorize%3Fid%3Dreq-42&lang=en"`,
		`<ul class="scopes" aria-labelledby="scopes-lead">`, `id="scopes-lead"`, en.T("OpenIDConsentLead"),
		"<strong>wiki.example.com</strong>",
		`action="/api/auth/oidc/consent"`, `method="POST"`, `name="csrfToken" value="csrf-123"`,
		`name="id" value="req-42"`, `name="user" value="user-7"`, `name="lang" value="en"`,
		`name="decision" value="allow">` + en.T("OpenIDAllow") + "</button>",
		`name="decision" value="deny">` + en.T("OpenIDDeny") + "</button>",
	} {
		require.Contains(t, out, want)
	}
	for _, s := range allScopes {
		require.Contains(t, out, "<li>"+en.T(s)+"</li>")
		require.NotEqual(t, s, en.T(s), "en.toml has %s", s)
	}
	require.Equal(t, 1, strings.Count(out, "<form "), "one form, two answers")
	require.NotContains(t, out, `role="alert"`)

	// A scope without a message is shown as it is; no account, no switch
	// link, no host line.
	d.Scopes, d.Account, d.SwitchURL, d.ClientHost = []string{"ScopeOpenID", "read:calendar"}, "", "", ""
	out = render(t, views.OpenIDConsentPage(d))
	require.Contains(t, out, "<bdi>read:calendar</bdi>")
	require.NotContains(t, out, en.T("OpenIDConsentSwitch"))
	require.NotContains(t, out, "wiki.example.com")
}

func TestOpenIDLogoutPage(t *testing.T) {
	en := lang(t, "en")
	d := views.OpenIDLogout{
		Page: page(t, "en", "TitleOpenIDLogout"), CSRFToken: "csrf-123", ActionURL: "/api/auth/oidc/logout",
		Logout: "sealed.request", ClientName: "Wiki",
	}
	out := render(t, views.OpenIDLogoutPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		"<title>" + en.T("TitleOpenIDLogout") + "</title>", "<h1>" + en.T("OpenIDLogoutHeading") + "</h1>",
		"<strong>Wiki</strong>", `action="/api/auth/oidc/logout"`, `name="csrfToken" value="csrf-123"`,
		`name="logout" value="sealed.request"`, `name="lang" value="en"`,
		`name="decision" value="signout">` + en.T("OpenIDLogoutConfirm") + "</button>",
		`name="decision" value="stay">` + en.T("OpenIDLogoutStay") + "</button>",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, en.T("OpenIDLogoutLead"))

	d.ClientName = ""
	out = render(t, views.OpenIDLogoutPage(d))
	require.Contains(t, out, en.T("OpenIDLogoutLead"))
	require.NotContains(t, out, "<strong>")
}

// TestOpenIDPagesLanguages: the pages are translated (no English left in
// German, Japanese, Arabic) and right-to-left in Arabic.
func TestOpenIDPagesLanguages(t *testing.T) {
	en := lang(t, "en")
	for _, tag := range []string{"de", "ja", "ar"} {
		l := lang(t, tag)
		out := render(t, views.OpenIDConsentPage(sampleConsent(t, tag)))
		for _, id := range append([]string{"OpenIDConsentLead", "OpenIDAllow", "OpenIDDeny", "OpenIDConsentSwitch"}, allScopes...) {
			require.Contains(t, out, l.T(id), "%s %s", tag, id)
			require.NotContains(t, out, en.T(id), "%s %s", tag, id)
		}
		if tag == "ar" {
			require.Contains(t, out, `dir="rtl"`)
		}
	}
}

func TestAccountPageApps(t *testing.T) {
	en := lang(t, "en")
	d := sampleAccount(t, "en")
	out := render(t, views.AccountPage(d))
	require.NotContains(t, out, en.T("AccountAppsHeading"), "no RevokeAppURL: the OpenID Provider is off")

	d.RevokeAppURL = "/api/auth/revoke-app"
	out = render(t, views.AccountPage(d))
	require.Contains(t, out, `<h2 id="apps-heading">`+en.T("AccountAppsHeading")+"</h2>")
	require.Contains(t, out, en.T("AccountAppsEmpty"))

	d.Apps = []views.AppItem{
		{ClientID: "wiki", Name: "Wiki", Scopes: []string{"ScopeOpenID", "ScopeEmail", "read:calendar"}, Since: "7 May 2026"},
		{ClientID: "ci", Name: "CI", Scopes: []string{"ScopeOpenID"}},
	}
	out = render(t, views.AccountPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		`<p class="item-title" id="app-0"><strong><bdi>Wiki</bdi></strong></p>`, en.T("AccountAppsSince", "Date", "7 May 2026"),
		`<ul class="scopes" aria-labelledby="app-scopes-0">`, "<li>" + en.T("ScopeEmail") + "</li>", "<bdi>read:calendar</bdi>",
		`action="/api/auth/revoke-app"`, `name="clientId" value="wiki"`, `name="clientId" value="ci"`,
		`aria-describedby="app-1">` + en.T("AccountAppsRevoke") + "</button>",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, en.T("AccountAppsEmpty"))
	for _, f := range formRE.FindAllString(out, -1) {
		if strings.Contains(f, "revoke-app") {
			require.Contains(t, f, `name="csrfToken" value="csrf-123"`)
			require.Contains(t, f, `name="lang" value="en"`)
		}
	}
}

func TestScopeLines(t *testing.T) {
	require.Equal(t, allScopes, views.ScopeLines([]string{"offline_access", "groups", "email", "profile", "openid"}), "the pages' order")
	require.Equal(t, []string{"ScopeOpenID", "ScopeEmail", "x", "read:calendar"},
		views.ScopeLines([]string{"x", "email", "read:calendar", "openid", "x", "", "email"}), "others as they are, after, in their order, once")
	require.Empty(t, views.ScopeLines(nil))
}
