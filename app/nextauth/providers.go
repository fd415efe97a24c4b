package nextauth

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
	"github.com/latchkey-auth/latchkey/views"
)

// providerInfo is one entry of GET /providers: exactly next-auth's five keys.
type providerInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	SigninURL   string `json:"signinUrl"`
	CallbackURL string `json:"callbackUrl"`
}

// providerSet is the configured providers in config order, with the
// /providers body rendered once at start-up.
type providerSet struct {
	list  []providerInfo
	byID  map[string]config.Provider
	body  []byte
	views []views.Provider
}

func (h *Handler) buildProviders(providers []config.Provider) (*providerSet, error) {
	ps := &providerSet{byID: map[string]config.Provider{}}
	ordered := make([]json.RawMessage, 0, len(providers))
	for _, p := range providers {
		info := providerInfo{
			ID:          p.ID,
			Name:        catalogue.DisplayName(p),
			Type:        h.wireType(p.Type),
			SigninURL:   h.base.URL("/signin/" + p.ID),
			CallbackURL: h.base.URL("/callback/" + p.ID),
		}
		ps.list = append(ps.list, info)
		ps.byID[p.ID] = p
		if p.Type != config.TypeTwoFactor { // its page is its own, not a sign-in form
			ps.views = append(ps.views, h.viewOf(p, info))
		}
		b, err := json.Marshal(info)
		if err != nil {
			return nil, fmt.Errorf("encode provider %s: %w", p.ID, err)
		}
		ordered = append(ordered, b)
	}
	// Keep config order in the JSON object (a map would sort the keys).
	ps.body = []byte("{")
	for i, p := range ps.list {
		if i > 0 {
			ps.body = append(ps.body, ',')
		}
		k, _ := json.Marshal(p.ID)
		ps.body = append(append(append(ps.body, k...), ':'), ordered[i]...)
	}
	ps.body = append(ps.body, '}')
	return ps, nil
}

// getProviders serves the precomputed provider map.
func (h *Handler) getProviders(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, h.providers.body)
}
