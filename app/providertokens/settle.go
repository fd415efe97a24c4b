package providertokens

import (
	"context"
	"fmt"

	"github.com/latchkey-auth/latchkey/models/tokenstore"
)

// settleBatch is how many accounts one read of the start-up step handles.
const settleBatch = 200

// Settle is the start-up data step (docs/provider-tokens.md): it seals
// the tokens an earlier latchkey stored in the clear, for providers with
// store_tokens, and clears every token of the other providers (an OAuth
// callback used to store them for all). A schema step cannot do it: which
// providers keep tokens is configuration, which the schema does not see.
// The refresh marks of the other providers go too. It is idempotent (a
// settled account is never listed again) and safe on
// several instances at once: each write is conditional on the values it
// read. It returns the accounts sealed and cleared.
func (s *Service) Settle(ctx context.Context) (sealed, cleared int, err error) {
	keep := make([]string, 0, len(s.keeps))
	for p := range s.keeps {
		keep = append(keep, p)
	}
	if _, err := s.store.ClearMarks(ctx, keep); err != nil {
		return 0, 0, err
	}
	after := ""
	for {
		batch, err := s.store.Unsettled(ctx, keep, sealPrefix, after, settleBatch)
		if err != nil {
			return sealed, cleared, err
		}
		for _, acc := range batch {
			after = acc.ID
			next := tokenstore.Sealed{}
			if s.keeps[acc.Provider] {
				if next, err = s.sealPlain(acc); err != nil {
					return sealed, cleared, err
				}
			}
			done, err := s.store.Replace(ctx, acc.ID, acc.Sealed, next)
			if err != nil {
				return sealed, cleared, fmt.Errorf("settle provider tokens: %w", err)
			}
			switch {
			case !done:
			case s.keeps[acc.Provider]:
				sealed++
			default:
				cleared++
			}
		}
		if len(batch) < settleBatch {
			if sealed+cleared > 0 {
				err = s.store.Erase(ctx)
			}
			return sealed, cleared, err
		}
	}
}

// sealPlain seals each token of acc stored in the clear, leaving sealed ones.
func (s *Service) sealPlain(acc tokenstore.Account) (tokenstore.Sealed, error) {
	out := acc.Sealed
	for _, c := range []struct {
		col string
		v   **string
	}{{colAccess, &out.AccessToken}, {colRefresh, &out.RefreshToken}, {colID, &out.IDToken}} {
		if isSealed(*c.v) {
			continue
		}
		v, err := s.seal.seal(acc.ID, c.col, *c.v)
		if err != nil {
			return out, err
		}
		*c.v = v
	}
	return out, nil
}
