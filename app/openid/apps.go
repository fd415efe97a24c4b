package openid

import "time"

// App is an application (client) a user has consented to, for the
// account page.
type App struct {
	ClientID string
	Name     string
	Scopes   []string // as consented, e.g. openid profile email
	Since    time.Time
}
