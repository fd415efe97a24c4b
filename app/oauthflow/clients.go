package oauthflow

import (
	"fmt"
	"net/http"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
)

// buildClients builds a client for every OAuth / OIDC provider, and lists
// their ids in the config's order. OIDC discovery is deferred to Discover
// or the first sign-in.
func buildClients(providers []config.Provider, base config.Base, idpClient *http.Client) (map[string]oauth.Client, []string, error) {
	clients := map[string]oauth.Client{}
	var order []string
	for _, p := range providers {
		redirect := base.URL("/callback/" + p.ID)
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
				return nil, nil, fmt.Errorf("provider %s: %w", p.ID, err)
			}
			clients[p.ID] = c
		default:
			continue
		}
		order = append(order, p.ID)
	}
	return clients, order, nil
}
