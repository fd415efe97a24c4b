package views

import "github.com/latchkey-auth/latchkey/app/i18n"

// The account page's e-mails: edit the wording here. Each is an
// AccountEmail (AccountEmailText, AccountEmailHTML). The notices go to the
// account's address so that a change made from a borrowed or stolen
// session does not go unnoticed.

// MethodRemovedEmail: the identity at provider was unlinked from the
// account.
func MethodRemovedEmail(l *i18n.Lang, host, provider string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("MethodRemovedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("MethodRemovedLine1", "Provider", provider, "Host", host), l.T("MethodRemovedNotYou")},
		Footer:  l.T("MethodAddedFooter"),
	}
}

// PasskeyAddedEmail: a passkey was added to the account. The button is
// the passkeys page (pageURL), where it is removed: a password reset does
// not remove passkeys, so the mail says so. The passkey's name is left
// out: whoever added it chose it.
func PasskeyAddedEmail(l *i18n.Lang, host, pageURL string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("MethodAddedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("PasskeyAddedLine1", "Host", host), l.T("PasskeyAddedLine2")},
		URL:     pageURL, Button: l.T("ManagePasskeys"),
		Footer: l.T("MethodAddedFooter"),
	}
}

// PasskeyRemovedEmail: a passkey was removed from the account.
func PasskeyRemovedEmail(l *i18n.Lang, host string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("MethodRemovedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("PasskeyRemovedLine1", "Host", host), l.T("MethodRemovedNotYou")},
		Footer:  l.T("MethodAddedFooter"),
	}
}

// EmailChangeLinkEmail goes to the NEW address: the button confirms that
// it is the account's address from now on.
func EmailChangeLinkEmail(l *i18n.Lang, host, url string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("EmailChangeSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("EmailChangeLine", "Host", host)},
		URL:     url, Button: l.T("EmailChangeEmailButton"),
		Footer: l.T("EmailChangeFooter"),
	}
}

// EmailInUseEmail goes to the new address instead of the link when another
// account has it: the page's answer is the same either way, so it says
// nothing about the address; its owner learns what was tried.
func EmailInUseEmail(l *i18n.Lang, host string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("EmailInUseSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("EmailInUseLine", "Host", host)},
		Footer:  l.T("NotYouFooter"),
	}
}

// EmailChangedEmail goes to the OLD address once the change is made.
func EmailChangedEmail(l *i18n.Lang, host, newAddr string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("EmailChangedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("EmailChangedLine", "Host", host, "Email", newAddr), l.T("EmailChangedNotYou")},
		Footer:  l.T("MethodAddedFooter"),
	}
}

// AccountDeletedEmail: the account and everything that was its are gone.
func AccountDeletedEmail(l *i18n.Lang, host string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("AccountDeletedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("AccountDeletedLine", "Host", host), l.T("AccountDeletedNotYou")},
		Footer:  l.T("AccountDeletedFooter"),
	}
}
