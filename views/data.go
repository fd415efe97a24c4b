// Package views renders latchkey's pages and e-mails with templ. Operators
// customise latchkey by editing the .templ files; handlers only pass the
// plain data below. Every text comes from the message catalogues
// (locales/<tag>.toml) through the page's language: a field documented as
// a message id (a title, a heading, an error) holds a catalogue key, which
// the view translates with T.
package views

import (
	"strings"

	"github.com/latchkey-auth/latchkey/app/i18n"
)

// Provider is one sign-in option as the sign-in page shows it.
type Provider struct {
	ID        string
	Name      string
	Type      string // "oauth", "oidc", "email", "credentials" or "webauthn"
	SigninURL string
	// CallbackURL is where a credentials provider's password form posts
	// ({base}/callback/{id}) or a webauthn provider's ceremony ends;
	// OptionsURL is a webauthn provider's options URL. SignupURL (""
	// when sign-up is off) and ResetURL are a credentials provider's pages.
	CallbackURL string
	OptionsURL  string
	SignupURL   string
	ResetURL    string
	// LabelID is the message id of the button's whole label when config
	// names no provider name (SignInWithEmail: "Sign in with Email",
	// translated); "" when Name is the operator's, shown as it is.
	LabelID string
}

// Label is the sign-in button's text for provider pr.
func (p Page) Label(pr Provider) string {
	if pr.LabelID != "" {
		return p.T(pr.LabelID)
	}
	return p.T("SignInWith", "Provider", pr.Name)
}

// Page is what every page's layout needs.
type Page struct {
	Title     string // message id
	StaticURL string // URL prefix of the embedded static files, e.g. /api/auth/static
	Script    string // URL of the page's one script (same origin), or ""
	Theme     Theme  // the configured theme (theme.go)
	// Lang is the page's language: every text comes from its catalogue.
	Lang *i18n.Lang
	// LangParam is the lang the request asked for explicitly (?lang=), or
	// "": forms carry it on, so the next page and the e-mail keep it.
	LangParam string
}

// T is the message id in the page's language (see i18n.Lang.T).
func (p Page) T(id string, kv ...string) string { return p.Lang.T(id, kv...) }

// Link is a link to another of latchkey's pages, carrying an explicit
// ?lang= on (LangParam is a catalogue's tag: nothing to escape).
func (p Page) Link(u string) string {
	if p.LangParam == "" {
		return u
	}
	if strings.Contains(u, "?") {
		return u + "&lang=" + p.LangParam
	}
	return u + "?lang=" + p.LangParam
}

// SignIn is the data of the sign-in page.
type SignIn struct {
	Page
	Providers   []Provider
	CSRFToken   string
	CallbackURL string
	Email       string // pre-filled from ?email=
	Error       string // message id for ?error=, or ""
	// Passkeys is true when a webauthn provider is listed: the e-mail field
	// then also offers passkeys (autofill).
	Passkeys bool
}

// SignOut is the data of the sign-out page.
type SignOut struct {
	Page
	Action    string
	CSRFToken string
	Error     string // message id, or ""
}

// Error is the data of the error page.
type Error struct {
	Page
	Heading   string   // message id
	Lines     []string // message ids
	SignInURL string   // shown as a button when set
	HomeURL   string
	HomeHost  string
}

// VerifyRequest is the data of the "check your email" page.
type VerifyRequest struct {
	Page
	HomeURL  string
	HomeHost string
}

// SignInEmail is the data of the sign-in e-mail.
type SignInEmail struct {
	URL         string // the sign-in link
	Host        string // the service's host[:port], as next-auth shows it
	EmailColors        // the theme's (theme.go)
	// Lang is the language of the page that asked for the e-mail.
	Lang *i18n.Lang
}

// ConfirmSignIn is the data of the page an e-mailed link opens when the
// provider has confirm: true.
type ConfirmSignIn struct {
	Page
	Action      string // where the button posts: {base}/callback/{provider}
	CSRFToken   string
	Token       string
	Email       string
	CallbackURL string
	Host        string
	Error       string // message id, or ""
}
