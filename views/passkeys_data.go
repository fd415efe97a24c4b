package views

// Passkeys is the data of the signed-in user's passkeys page.
type Passkeys struct {
	Page
	CSRFToken   string
	OptionsURL  string // GET {base}/webauthn-options/{provider}
	CallbackURL string // POST {base}/callback/{provider}
	RenameURL   string
	RemoveURL   string
	Items       []PasskeyItem
	Notice      string // message id, or ""
	Error       string // message id, or ""
}

// PasskeyItem is one passkey as the page lists it.
type PasskeyItem struct {
	ID       string
	Name     string
	Created  string
	LastUsed string // "" when never used
	Synced   bool   // backup eligible: a synced passkey
}
