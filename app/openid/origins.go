package openid

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/latchkey-auth/latchkey/app/logs"
)

// clientURIs caches every client's redirect and post-logout URIs for the
// pages' Content-Security-Policy: a form posted on latchkey's pages (the
// consent page, the sign-in page of a waiting request, the logout page)
// ends, through redirects, on a client's URI, and Chromium checks
// form-action on each hop. Stored clients are re-read every keyReload.
type clientURIs struct {
	mu   sync.Mutex
	read time.Time
	uris []string
}

// ClientURIs are every client's redirect and post-logout URIs: config.yaml's
// and the stored ones (re-read at most every 10 s; on a failed read the
// last list stays).
func (s *Service) ClientURIs(ctx context.Context) []string {
	c := &s.uris
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.now()
	if c.uris != nil && now.Sub(c.read) < keyReload {
		return c.uris
	}
	var uris []string
	for _, cl := range s.set.Clients {
		uris = append(append(uris, cl.RedirectURIs...), cl.PostLogoutRedirectURIs...)
	}
	rows, err := s.store.Clients(ctx)
	if err != nil {
		logs.RequestFailed(s.log, slog.LevelWarn, err, "openid: read clients for the pages' form-action", "err", err)
		if c.uris != nil {
			return c.uris
		}
	}
	for i := range rows {
		cl := storedClient(&rows[i], &s.set)
		uris = append(append(uris, cl.Redirects...), cl.PostLogouts...)
	}
	if uris == nil {
		uris = []string{}
	}
	c.uris, c.read = uris, now
	return uris
}
