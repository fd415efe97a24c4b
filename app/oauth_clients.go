package app

import (
	"fmt"
	"net/http"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
)

// buildOAuthClients builds a client for every OAuth / OIDC provider. OIDC
// discovery is deferred to the first sign-in.
func (a *App) buildOAuthClients(idpClient *http.Client) (map[string]oauth.Client, error) {
	clients := map[string]oauth.Client{}
	for _, p := range a.cfg.Providers {
		redirect := a.base.URL("/callback/" + p.ID)
		switch p.Type {
		case config.TypeOIDC:
			clients[p.ID] = oauth.NewOIDC(oauth.OIDCConfig{
				Issuer: p.Issuer, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
				RedirectURL: redirect, Scopes: p.Scopes, HTTPClient: idpClient, TrustEmail: p.TrustEmail,
			})
		case config.TypeOAuth:
			c, err := oauth.NewGoth(catalogue.Config{
				ID: p.ID, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
				CallbackURL: redirect, Scopes: p.Scopes, Extra: p.Extra, HTTPClient: idpClient, TrustEmail: p.TrustEmail,
			})
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", p.ID, err)
			}
			clients[p.ID] = c
		}
	}
	return clients, nil
}
