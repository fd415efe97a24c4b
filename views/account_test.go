package views_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/views"
)

func sampleAccount(t *testing.T, tag string) views.Account {
	return views.Account{
		Page: page(t, tag, "TitleAccount"), CSRFToken: "csrf-123",
		Name: "Ann Example", Email: "ann@example.com", EmailVerified: true, Created: "3 May 2026",
		Linked: []views.LinkedAccount{
			{ID: "acc-gh", ProviderName: "GitHub", Label: "ann-gh", Linked: "4 May 2026"},
			{ID: "acc-go", ProviderName: "Google", Label: "ann@gmail.example", Linked: "5 May 2026"},
		},
		CanLink: []views.LinkOption{{ID: "gitlab", Name: "GitLab"}},
		LinkURL: "/api/auth/link-account", UnlinkURL: "/api/auth/unlink-account",
		HasPassword: true, PasswordURL: "/api/auth/account/password",
		PasskeysURL: "/api/auth/account/passkeys", PasskeyCount: 2,
		TwoFactorURL: "/api/auth/account/two-factor", TwoFactorOn: false,
		Sessions: []views.SessionItem{
			{ID: "s-current", Device: "Firefox 128 on Linux", Network: "203.0.113.0/24", Started: "6 May 2026 10:00", LastSeen: "today 09:12", Current: true},
			{ID: "s-phone", Device: "Safari 17 on iOS", Network: "2001:db8:1::/48", Started: "1 May 2026 08:00", LastSeen: "yesterday"},
			{ID: "s-old", Started: "30 Apr 2026 07:00"},
		},
		RevokeURL: "/api/auth/revoke-session", RevokeOthersURL: "/api/auth/revoke-other-sessions",
		ChangeEmailURL: "/api/auth/change-email",
		DeleteURL:      "/api/auth/delete-user", DeleteConfirmWord: "ann@example.com",
	}
}

var formRE = regexp.MustCompile(`(?s)<form [^>]*>.*?</form>`)

func TestAccountPage(t *testing.T) {
	en := lang(t, "en")
	d := sampleAccount(t, "en")
	out := render(t, views.AccountPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		"<title>" + en.T("TitleAccount") + "</title>", en.T("AccountHeading"),
		en.T("ProfileHeading"), en.T("SignInMethodsHeading"), en.T("SessionsHeading"),
		en.T("ChangeEmailHeading"), en.T("DeleteAccountHeading"), en.T("LinkedAccountsHeading"), en.T("LinkAnotherHeading"),
		"Ann Example", "ann@example.com", en.T("EmailVerified"), "3 May 2026",
		en.T("PasswordSet"), `href="/api/auth/account/password?lang=en"`, en.T("ChangePasswordButton"),
		en.T("PasskeyCount", "Count", "2"), `href="/api/auth/account/passkeys?lang=en"`,
		en.T("TwoFactorStateOff"), en.T("SetUpTwoFactor"), `href="/api/auth/account/two-factor?lang=en"`,
		"GitHub", "ann-gh", en.T("LinkedOn", "Date", "4 May 2026"), en.T("UnlinkButton", "Provider", "Google"),
		`name="provider" value="gitlab"`, en.T("LinkButton", "Provider", "GitLab"),
		"Firefox 128 on Linux", en.T("ThisDevice"), "<strong>203.0.113.0/24</strong>", en.T("SessionLastSeen", "Date", "today 09:12"),
		en.T("UnknownDevice"), en.T("EndOtherSessionsButton"),
		`name="email"`, `type="email"`, en.T("NewEmailLabel"),
		`name="confirm"`, en.T("DeleteAccountWarning"),
	} {
		require.Contains(t, out, want)
	}

	// Every form: its csrfToken and the language; one Unlink form per
	// linked account, a Link form per option, an End form per other session.
	forms := formRE.FindAllString(out, -1)
	require.Len(t, forms, 2+1+2+1+1+1)
	for _, f := range forms {
		require.Contains(t, f, `name="csrfToken" value="csrf-123"`, f)
		require.Contains(t, f, `name="lang" value="en"`, f)
		require.Contains(t, f, `method="POST"`, f)
	}
	require.Equal(t, 2, strings.Count(out, `action="/api/auth/unlink-account"`))
	require.Contains(t, out, `name="id" value="acc-gh"`)
	require.Equal(t, 2, strings.Count(out, `action="/api/auth/revoke-session"`))
	require.Contains(t, out, `name="id" value="s-phone"`)
	require.Contains(t, out, `name="id" value="s-old"`)
	require.NotContains(t, out, `value="s-current"`, "the current session has no End form")
	require.Equal(t, 1, strings.Count(out, en.T("ThisDevice")))

	// The delete field's label names the word to type.
	label := regexp.MustCompile(`(?s)<label [^>]*for="input-confirm"[^>]*>(.*?)</label>`).FindStringSubmatch(out)
	require.NotNil(t, label)
	require.Contains(t, label[1], "<strong>ann@example.com</strong>")
	require.Contains(t, stripTags(label[1]), en.T("DeleteConfirmLabel", "Word", "ann@example.com"))

	require.NotContains(t, out, `role="alert"`)
	require.NotContains(t, out, `role="status"`)
	require.NotContains(t, out, "<no value>")
}

func TestAccountPageMessages(t *testing.T) {
	en := lang(t, "en")
	d := sampleAccount(t, "en")
	d.Notice, d.Count = "OtherSessionsEnded", 3
	out := render(t, views.AccountPage(d))
	require.Contains(t, out, `role="status"`)
	require.Contains(t, out, en.T("OtherSessionsEnded", "Count", "3"))

	d.Notice, d.Error, d.DeleteConfirmWord = "", "DeleteConfirmation", "DELETE"
	out = render(t, views.AccountPage(d))
	require.Contains(t, out, `role="alert"`)
	require.Contains(t, out, en.T("DeleteConfirmation", "Word", "DELETE"))
	require.NotContains(t, out, "<no value>")

	for _, id := range []string{"SessionEnded", "MethodUnlinked", "EmailChangeSent", "EmailChanged", "AccountReauth",
		"LastSignInMethod", "SessionNotFound", "LinkedAccountNotFound", "SameEmail", "BadAddress", "RateLimited",
		"EmailChangeDeadLink", "EmailTaken", "SelfDeleteOff"} {
		require.NotEqual(t, id, en.T(id), "en.toml has %s", id)
	}
}

func TestAccountPageOptionalParts(t *testing.T) {
	en := lang(t, "en")
	d := sampleAccount(t, "en")
	d.Name, d.EmailVerified, d.HasPassword, d.TwoFactorOn = "", false, false, true
	d.Linked, d.CanLink = nil, nil
	d.PasskeysURL, d.ChangeEmailURL, d.DeleteURL = "", "", ""
	d.Sessions = d.Sessions[:1]
	out := render(t, views.AccountPage(d))
	requireLabelled(t, out)
	require.Contains(t, out, en.T("NotSet"))
	require.Contains(t, out, en.T("EmailNotVerified"))
	require.Contains(t, out, en.T("PasswordNotSet"))
	require.Contains(t, out, en.T("AddPasswordHeading"))
	require.Contains(t, out, en.T("TwoFactorStateOn"))
	require.Contains(t, out, en.T("ManageTwoFactor"))
	require.Contains(t, out, en.T("NoLinkedAccounts"))
	for _, gone := range []string{
		en.T("LinkAnotherHeading"), "/api/auth/account/passkeys", en.T("ChangeEmailHeading"), `name="email"`,
		en.T("DeleteAccountHeading"), `name="confirm"`, "revoke-session", "revoke-other-sessions", "<form",
	} {
		require.NotContains(t, out, gone)
	}

	d.PasswordURL, d.TwoFactorURL = "", ""
	out = render(t, views.AccountPage(d))
	require.NotContains(t, out, "/account/password")
	require.NotContains(t, out, en.T("TwoFactorStateOn"))
}

func TestAccountPageLanguages(t *testing.T) {
	for _, tag := range []string{"ar", "ja", "de"} {
		l := lang(t, tag)
		out := render(t, views.AccountPage(sampleAccount(t, tag)))
		requireLabelled(t, out)
		require.Contains(t, out, l.T("SessionsHeading"))
		require.Contains(t, out, `name="lang" value="`+tag+`"`)
		require.NotContains(t, out, "<no value>")
		if tag == "ar" {
			require.Contains(t, out, `dir="rtl"`)
		}
	}
}

func TestEmailChangeConfirmPage(t *testing.T) {
	en := lang(t, "en")
	d := views.EmailChangeConfirm{
		Page: page(t, "en", "TitleEmailChange"), CSRFToken: "csrf-123", ActionURL: "/api/auth/account/email/confirm",
		Token: "tok-456", NewEmail: "ann@new.example",
	}
	out := render(t, views.EmailChangeConfirmPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		"<title>" + en.T("TitleEmailChange") + "</title>", en.T("EmailChangeHeading"),
		`action="/api/auth/account/email/confirm"`, `name="csrfToken" value="csrf-123"`, `name="token" value="tok-456"`,
		`name="lang" value="en"`, "<strong>ann@new.example</strong>", en.T("EmailChangeConfirmButton"), en.T("EmailChangeNotYou"),
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, `role="alert"`)

	d.Error, d.Token, d.NewEmail = "EmailChangeDeadLink", "", ""
	out = render(t, views.EmailChangeConfirmPage(d))
	require.Contains(t, out, `role="alert"`)
	require.Contains(t, out, en.T("EmailChangeDeadLink"))
	require.NotContains(t, out, "<form", "a dead link has nothing to confirm")
}

func TestAccountEmails(t *testing.T) {
	const host = "auth.example.com"
	for _, tag := range []string{"en", "de", "ja", "ar", "pl"} {
		l := lang(t, tag)
		for name, m := range map[string]views.AccountEmail{
			"removed": views.MethodRemovedEmail(l, host, "GitHub"),
			"link":    views.EmailChangeLinkEmail(l, host, "https://auth.example.com/api/auth/account/email/confirm?token=t1"),
			"in use":  views.EmailInUseEmail(l, host),
			"changed": views.EmailChangedEmail(l, host, "ann@new.example"),
			"deleted": views.AccountDeletedEmail(l, host),
		} {
			require.Contains(t, m.Subject, host, "%s %s", tag, name)
			text := render(t, views.AccountEmailText(m))
			require.Contains(t, text, host, "%s %s", tag, name)
			require.NotContains(t, text, "{{")
			require.NotContains(t, text, "<no value>")
			htm := render(t, views.AccountEmailHTML(m))
			require.Contains(t, htm, `lang="`+tag+`"`)
			if name == "link" {
				require.Contains(t, text, "?token=t1")
				require.NotEmpty(t, m.Button)
				require.Contains(t, htm, `href="https://auth.example.com/api/auth/account/email/confirm?token=t1"`)
			} else {
				require.Empty(t, m.URL, "%s %s: a notice has no button", tag, name)
			}
		}
	}
	en := lang(t, "en")
	require.Contains(t, views.MethodRemovedEmail(en, "h", "GitHub").Lines[0], "GitHub")
	require.Contains(t, views.EmailChangedEmail(en, "h", "ann@new.example").Lines[0], "ann@new.example")
	require.Contains(t, views.EmailChangedEmail(en, "h", "x@y").Lines, en.T("EmailChangedNotYou"))
	require.Contains(t, views.EmailInUseEmail(en, "h").Lines[0], "Nothing was changed")
}

var tagRE = regexp.MustCompile(`<[^>]+>`)

func stripTags(s string) string { return strings.TrimSpace(tagRE.ReplaceAllString(s, "")) }
