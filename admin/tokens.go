package admin

import (
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/latchkey-auth/latchkey/models/tokenstore"
)

// tokenJSON is one account of `accounts tokens --json`: which provider
// tokens it holds and until when, never the tokens.
type tokenJSON struct {
	Provider     string     `json:"provider"`
	StoreTokens  bool       `json:"storeTokens"` // the provider has store_tokens on
	AccessToken  bool       `json:"accessToken"`
	RefreshToken bool       `json:"refreshToken"`
	IDToken      bool       `json:"idToken"`
	ExpiresAt    *time.Time `json:"expiresAt"`
	// Error is "RefreshAccessTokenError" while the user must sign in with
	// the provider again (its refresh token was refused).
	Error string `json:"error,omitempty"`
}

// accountsTokens is `latchkey accounts tokens USER`: per linked provider,
// whether access, refresh and id tokens are kept and when the access token
// expires (docs/provider-tokens.md). The tokens themselves are never shown.
func accountsTokens(r *adminRun) error {
	u, err := r.findUser(r.args[0])
	if err != nil {
		return err
	}
	accounts, err := tokenstore.New(r.store).AccountsOf(r.ctx, u.ID)
	if err != nil {
		return err
	}
	var keep []string
	for _, p := range r.cfg.Providers {
		if p.StoreTokens {
			keep = append(keep, p.ID)
		}
	}
	out := make([]tokenJSON, len(accounts))
	for i, a := range accounts {
		out[i] = tokenJSON{Provider: a.Provider, StoreTokens: slices.Contains(keep, a.Provider),
			AccessToken: a.AccessToken != nil, RefreshToken: a.RefreshToken != nil, IDToken: a.IDToken != nil}
		if a.ExpiresAt != nil {
			t := time.Unix(*a.ExpiresAt, 0).UTC()
			out[i].ExpiresAt = &t
		}
		if a.TokenError != nil {
			out[i].Error = *a.TokenError
		}
	}
	if r.json {
		return r.printJSON(out)
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PROVIDER\tSTORE_TOKENS\tACCESS\tREFRESH\tID_TOKEN\tEXPIRES\tSTATE")
	for _, t := range out {
		expires, state := "-", "ok"
		if t.ExpiresAt != nil {
			expires = stamp(*t.ExpiresAt)
			if t.ExpiresAt.Before(r.now) {
				expires += " (expired)"
			}
		}
		switch {
		case t.Error != "":
			state = t.Error + ": the user must sign in with it again"
		case !t.AccessToken:
			state = "no token kept"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Provider, yes(t.StoreTokens), yes(t.AccessToken), yes(t.RefreshToken), yes(t.IDToken), expires, state)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "%s of user %s\n", plural(int64(len(out)), "account"), label(u))
	return nil
}
