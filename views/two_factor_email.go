package views

import (
	"strconv"

	"github.com/latchkey-auth/latchkey/app/i18n"
)

// The two-factor notices, sent to the account's address so that a change
// made from a borrowed or stolen session does not go unnoticed. Each is an
// AccountEmail (AccountEmailText, AccountEmailHTML), with no button.

// TwoFactorOnEmail: two-factor sign-in was turned on.
func TwoFactorOnEmail(l *i18n.Lang, host string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("TwoFactorOnSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("TwoFactorOnLine1", "Host", host), l.T("TwoFactorOnLine2"), l.T("TwoFactorOnNotYou")},
		Footer:  l.T("TwoFactorEmailFooter"),
	}
}

// TwoFactorOffEmail: two-factor sign-in was turned off.
func TwoFactorOffEmail(l *i18n.Lang, host string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("TwoFactorOffSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("TwoFactorOffLine1", "Host", host), l.T("TwoFactorOffNotYou")},
		Footer:  l.T("TwoFactorEmailFooter"),
	}
}

// RecoveryCodeUsedEmail: a recovery code was used to sign in; left is how
// many unused codes remain.
func RecoveryCodeUsedEmail(l *i18n.Lang, host string, left int) AccountEmail {
	count := l.T("RecoveryCodeUsedLeft", "Count", strconv.Itoa(left))
	if left <= 0 {
		count = l.T("RecoveryCodeUsedNoneLeft")
	}
	return AccountEmail{
		Lang:    l,
		Subject: l.T("RecoveryCodeUsedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("RecoveryCodeUsedLine1", "Host", host), count, l.T("RecoveryCodeUsedNotYou")},
		Footer:  l.T("TwoFactorEmailFooter"),
	}
}

// RecoveryCodesReplacedEmail: a new set of recovery codes was made and
// the old one stopped working. A set made from someone else's session is
// a way past the code: the owner hears of it.
func RecoveryCodesReplacedEmail(l *i18n.Lang, host string) AccountEmail {
	return AccountEmail{
		Lang:    l,
		Subject: l.T("RecoveryCodesReplacedSubject", "Host", host),
		Host:    host,
		Lines:   []string{l.T("RecoveryCodesReplacedLine1", "Host", host), l.T("RecoveryCodesReplacedNotYou")},
		Footer:  l.T("TwoFactorEmailFooter"),
	}
}
