package app

import (
	"context"
	"fmt"

	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/app/oauthflow"
	"github.com/latchkey-auth/latchkey/app/providertokens"
	"github.com/latchkey-auth/latchkey/app/tokenapi"
	"github.com/latchkey-auth/latchkey/models/tokenstore"
)

// flowAfterTokens is the OAuth flow, which refreshes the provider tokens
// but is built after their rules (it keeps the tokens a sign-in brings).
type flowAfterTokens struct{ h *oauthflow.Handler }

func (f *flowAfterTokens) Refresh(ctx context.Context, provider, refreshToken string) (*oauth2.Token, error) {
	return f.h.Refresh(ctx, provider, refreshToken)
}

// buildTokens builds the provider tokens' rules (app/providertokens, on
// models/tokenstore) and runs their start-up data step: tokens stored in
// the clear by an earlier latchkey are sealed for providers with
// store_tokens and cleared for the others (docs/provider-tokens.md).
func (w *wiring) buildTokens(flow *flowAfterTokens) (*providertokens.Service, error) {
	var keep []string
	for _, p := range w.cfg.Providers {
		if p.StoreTokens {
			keep = append(keep, p.ID)
		}
	}
	t := w.cfg.Tokens
	svc, err := providertokens.New(tokenstore.New(w.store), flow, providertokens.Config{
		Providers: keep, Secrets: w.cfg.Secrets(), Skew: t.RefreshSkew.D(), Wait: t.RefreshWait.D(), Now: w.now, Log: w.log,
	})
	if err != nil {
		return nil, err
	}
	sealed, cleared, err := svc.Settle(context.Background())
	if err != nil {
		return nil, fmt.Errorf("start: settle stored provider tokens: %w", err)
	}
	if sealed+cleared > 0 {
		w.log.Info("provider tokens stored in the clear settled", "sealed", sealed, "cleared", cleared)
	}
	return svc, nil
}

// tokenHandler is GET {base}/token/:provider (app/tokenapi), reading the
// session as GET /session does.
func (w *wiring) tokenHandler(sessions tokenapi.Sessions, svc *providertokens.Service) *tokenapi.Handler {
	return tokenapi.New(sessions, svc, w.cfg.Tokens.ClientSecret, w.front.proxies, w.policy, w.log)
}
