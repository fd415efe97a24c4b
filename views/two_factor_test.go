package views_test

import (
	"bytes"
	"context"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/views"
)

func lang(t *testing.T, tag string) *i18n.Lang {
	t.Helper()
	c, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	l, ok := c.Param(tag)
	require.True(t, ok, tag)
	return l
}

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, c.Render(context.Background(), &b))
	return html.UnescapeString(b.String()) // the texts as a reader sees them

}

var (
	visibleInput = regexp.MustCompile(`<input [^>]*>`)
	inputID      = regexp.MustCompile(`\bid="([^"]+)"`)
)

// requireLabelled: every visible input has an id and a <label for> it.
func requireLabelled(t *testing.T, page string) {
	t.Helper()
	for _, in := range visibleInput.FindAllString(page, -1) {
		if strings.Contains(in, `type="hidden"`) {
			continue
		}
		m := inputID.FindStringSubmatch(in)
		require.NotNil(t, m, "input without id: %s", in)
		require.Contains(t, page, `for="`+m[1]+`"`, "no label for %s", in)
	}
}

func page(t *testing.T, tag, title string) views.Page {
	return views.Page{Title: title, StaticURL: "/api/auth/static", Lang: lang(t, tag), LangParam: tag}
}

func TestSecondStepPage(t *testing.T) {
	en := lang(t, "en")
	d := views.SecondStep{
		Page: page(t, "en", "TitleTwoFactor"), CSRFToken: "csrf-123", ActionURL: "/api/auth/callback/two-factor",
		CallbackURL: "https://app.example.com/after", RememberDays: 30, SignInURL: "/api/auth/signin",
		Error: "TwoFactorRequired",
	}
	out := render(t, views.SecondStepPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		`action="/api/auth/callback/two-factor"`, `name="csrfToken" value="csrf-123"`,
		`name="callbackUrl" value="https://app.example.com/after"`, `name="lang" value="en"`,
		`name="code"`, `autocomplete="one-time-code"`, `name="remember" value="on"`,
		en.T("TwoFactorHeading"), en.T("TwoFactorRequired"), en.T("TwoFactorCodeHint"),
		en.T("TwoFactorRemember", "Days", "30"), `href="/api/auth/signin?lang=en"`,
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "pattern=", "a recovery code must not be refused by the browser")
	require.NotContains(t, out, `inputmode="numeric"`, "a recovery code has letters: no number pad")
	require.NotContains(t, out, `role="alert"`, "TwoFactorRequired is the lead text, not an error")

	d.Error, d.StepUp, d.RememberDays = "TwoFactorInvalid", true, 0
	out = render(t, views.SecondStepPage(d))
	require.Contains(t, out, `role="alert"`)
	require.Contains(t, out, en.T("TwoFactorInvalid"))
	require.Contains(t, out, en.T("TwoFactorStepUpHeading"))
	require.Contains(t, out, en.T("TwoFactorStepUpLead"))
	require.NotContains(t, out, `name="remember"`)

	ar := render(t, views.SecondStepPage(views.SecondStep{Page: page(t, "ar", "TitleTwoFactor"), RememberDays: 7}))
	require.Contains(t, ar, `dir="rtl"`)
	require.Contains(t, ar, lang(t, "ar").T("TwoFactorRemember", "Days", "7"))
}

func TestTwoFactorSetupPage(t *testing.T) {
	en := lang(t, "en")
	const uri = "otpauth://totp/latchkey:ann@example.com?secret=JBSWY3DPEHPK3PXP&issuer=latchkey"
	qr := templ.Raw(`<svg xmlns="http://www.w3.org/2000/svg" aria-hidden="true"><rect/></svg>`)
	d := views.TwoFactorSetup{
		Page: page(t, "en", "TitleTwoFactorSetup"), CSRFToken: "csrf-123", ActionURL: "/api/auth/account/two-factor/enable",
		QR: qr, Secret: "JBSWY3DPEHPK3PXP", URI: uri, Required: true, Error: "TwoFactorSetupRequired",
	}
	out := render(t, views.TwoFactorSetupPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		`action="/api/auth/account/two-factor/enable"`, `name="csrfToken" value="csrf-123"`, `name="lang" value="en"`,
		`autocomplete="one-time-code"`, `inputmode="numeric"`, `role="img" aria-label="` + en.T("TwoFactorQRLabel") + `"`,
		`<svg xmlns`, "JBSW Y3DP EHPK 3PXP", "<details", en.T("TwoFactorManualSummary"), `role="status"`,
		en.T("TwoFactorSetupRequired"),
	} {
		require.Contains(t, out, want)
	}
	require.Contains(t, out, `<code class="uri">`+uri+"</code>", "the URI is shown as text")
	require.NotContains(t, out, `href="otpauth`, "the URI is never a link")
	require.NotContains(t, out, `name="callbackUrl"`, "no callbackUrl field when there is none")
	require.NotContains(t, out, `role="alert"`, "the required policy is said once, as a notice")

	d.Required, d.Error, d.CallbackURL = false, "TwoFactorInvalid", "https://app.example.com/"
	out = render(t, views.TwoFactorSetupPage(d))
	require.Contains(t, out, `role="alert"`)
	require.Contains(t, out, en.T("TwoFactorInvalid"))
	require.Contains(t, out, `name="callbackUrl" value="https://app.example.com/"`)
	require.NotContains(t, out, en.T("TwoFactorSetupRequired"))
}

func TestTwoFactorSettingsPage(t *testing.T) {
	en := lang(t, "en")
	d := views.TwoFactorSettings{
		Page: page(t, "en", "TitleTwoFactorSettings"), CSRFToken: "csrf-123", Since: "3 May 2026", CodesLeft: 7,
		RegenerateURL: "/api/auth/account/two-factor/recovery-codes", DisableURL: "/api/auth/account/two-factor/disable",
		Notice: "TwoFactorEnabledNotice",
	}
	out := render(t, views.TwoFactorSettingsPage(d))
	requireLabelled(t, out)
	for _, want := range []string{
		`action="/api/auth/account/two-factor/recovery-codes"`, `action="/api/auth/account/two-factor/disable"`,
		`name="code"`, `role="status"`, en.T("TwoFactorEnabledNotice"), en.T("TwoFactorOnSince", "Date", "3 May 2026"),
		en.T("TwoFactorCodesLeft", "Count", "7"),
	} {
		require.Contains(t, out, want)
	}
	require.Equal(t, 2, strings.Count(out, `name="csrfToken" value="csrf-123"`))
	require.Equal(t, 2, strings.Count(out, `name="lang" value="en"`))
	require.NotContains(t, out, "otpauth", "no secret on the settings page")
	require.NotContains(t, out, "secret")
	require.NotContains(t, out, en.T("TwoFactorCodesLow"))

	d.CodesLeft, d.Notice, d.Error = 1, "", "TwoFactorInvalid"
	out = render(t, views.TwoFactorSettingsPage(d))
	require.Contains(t, out, en.T("TwoFactorCodesLow"))
	require.Contains(t, out, `role="alert"`)
	require.NotContains(t, out, `role="status"`)
}

func TestRecoveryCodesPage(t *testing.T) {
	en := lang(t, "en")
	codes := []string{"abcd-efgh-ijkl", "mnop-qrst-uvwx", "2345-6789-abcd"}
	out := render(t, views.RecoveryCodesPage(views.RecoveryCodes{
		Page: page(t, "en", "TitleRecoveryCodes"), Codes: codes, ContinueURL: "https://app.example.com/",
		Notice: "TwoFactorEnabledNotice",
	}))
	require.Contains(t, out, `<ul class="codes"`)
	for _, c := range codes {
		require.Contains(t, out, "<li><code>"+c+"</code></li>")
	}
	require.Contains(t, out, en.T("RecoveryCodesOnce"))
	require.Contains(t, out, `href="https://app.example.com/"`)
	require.Contains(t, out, en.T("ContinueButton"))
	require.Contains(t, out, `role="status"`)
}

func TestTwoFactorEmails(t *testing.T) {
	for _, tag := range []string{"en", "de", "ja", "ar"} {
		l := lang(t, tag)
		for name, m := range map[string]views.AccountEmail{
			"on": views.TwoFactorOnEmail(l, "auth.example.com"), "off": views.TwoFactorOffEmail(l, "auth.example.com"),
			"used": views.RecoveryCodeUsedEmail(l, "auth.example.com", 4), "replaced": views.RecoveryCodesReplacedEmail(l, "auth.example.com"),
		} {
			require.Contains(t, m.Subject, "auth.example.com", "%s %s", tag, name)
			require.Empty(t, m.URL)
			text := render(t, views.AccountEmailText(m))
			require.Contains(t, text, "auth.example.com")
			require.NotContains(t, text, "{{")
			render(t, views.AccountEmailHTML(m))
		}
	}
	en := lang(t, "en")
	require.Contains(t, views.RecoveryCodeUsedEmail(en, "h", 4).Lines, en.T("RecoveryCodeUsedLeft", "Count", "4"))
	require.Contains(t, views.RecoveryCodeUsedEmail(en, "h", 0).Lines, en.T("RecoveryCodeUsedNoneLeft"))
	require.Contains(t, views.TwoFactorOffEmail(en, "h").Lines, en.T("TwoFactorOffNotYou"))
}

func TestGroupSecret(t *testing.T) {
	require.Equal(t, "JBSW Y3DP EHPK 3PXP", views.GroupSecret("JBSWY3DPEHPK3PXP"))
	require.Equal(t, "JBSW Y3DP EH", views.GroupSecret("jbsw y3dp eh=="))
	require.Equal(t, "", views.GroupSecret(""))
}
