package config

// Account is the account page's configuration ({base}/account and its
// JSON API; docs/account.md).
type Account struct {
	// SelfDelete lets users delete their own account (default true); off,
	// only an admin can (`latchkey users delete`).
	SelfDelete bool `yaml:"self_delete"`
}
