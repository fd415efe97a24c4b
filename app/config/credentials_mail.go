package config

// SendsMail reports whether an e-mail provider is configured: the password
// flows that e-mail links (sign-up, reset, adding a password) need one.
func (c *Config) SendsMail() bool {
	for _, p := range c.Providers {
		if p.Type == TypeEmail {
			return true
		}
	}
	return false
}

// credentialsWithoutMail is the warning for a credentials provider that no
// e-mail provider can send links for.
func (c *Config) credentialsWithoutMail() []string {
	if _, ok := c.Credentials(); !ok || c.SendsMail() {
		return nil
	}
	return []string{"providers: no e-mail provider sends the credentials provider's links: sign-up and password reset are off; users come from `latchkey users create`"}
}
