package views

import "github.com/latchkey-auth/latchkey/app/i18n"

// MethodAddedEmail tells a user's address that an identity at provider
// was linked to the account, so that a link made from a borrowed or stolen
// session does not go unnoticed. resetURL, when the password reset is on,
// is where the user can take the account back (the reset can remove
// linked sign-in methods).
func MethodAddedEmail(l *i18n.Lang, host, provider, resetURL string) AccountEmail {
	m := AccountEmail{
		Lang:    l,
		Subject: l.T("MethodAddedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("MethodAddedLine1", "Provider", provider, "Host", host), l.T("MethodAddedLine2")},
		Footer:  l.T("MethodAddedFooter"),
	}
	if resetURL != "" {
		m.URL, m.Button = resetURL, l.T("ResetPasswordButton")
	}
	return m
}
