package views

import "github.com/latchkey-auth/latchkey/app/i18n"

// PasswordForm is the data of every password page's form.
type PasswordForm struct {
	Page
	Action      string // where the form posts
	CSRFToken   string
	CallbackURL string
	Email       string // pre-filled (sign-up, reset) or shown (confirm pages, account)
	Token       string // the e-mailed link's token (confirm pages)
	Host        string // the service's host, named on the confirm pages
	SignInURL   string
	HasPassword bool   // account page: change (true) or add (false)
	HasLinked   bool   // reset page: the user has linked OAuth identities, which the reset may remove
	Error       string // message id, or ""
}

// PasswordNotice is a page that only tells: a heading, lines and at most
// one link, shown as a button.
type PasswordNotice struct {
	Page
	Heading  string   // message id
	Lines    []string // message ids
	LinkURL  string
	LinkText string // message id
}

// AccountEmail is the data of the password flows' e-mails.
type AccountEmail struct {
	Subject     string
	Host        string
	Lines       []string // paragraphs before the button
	URL         string   // the button's link ("" for none)
	Button      string
	Footer      string
	Lang        *i18n.Lang // the e-mail's language
	EmailColors            // the theme's (theme.go)
}
