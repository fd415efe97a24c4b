package openid

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// RequestLimiter bounds the authorization requests one client may have
// stored (*email.ClientLimits): anyone can send one, unauthenticated, and
// each is a row until it expires. Allow counts one for clientIP when it
// allows it; err is a counter that could not be asked.
type RequestLimiter interface {
	Allow(ctx context.Context, clientIP string, now time.Time) (ok bool, reason string, err error)
}

// clientIPKey carries the client's address in a request's context.
type clientIPKey struct{}

// WithClientIP gives ctx the client's address (as trusted_proxies reads
// it): the OP library calls CreateAuthRequest with the request's context
// and nothing else of the request.
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// errTooManyRequests is RFC 6749's temporarily_unavailable (§4.1.2.1),
// sent back to the client with its state.
func errTooManyRequests(why string) *oidc.Error {
	return (&oidc.Error{ErrorType: "temporarily_unavailable"}).
		WithDescription("too many authorization requests from this client; try again later").
		WithParent(errors.New(why))
}

// allowRequest counts one stored authorization request of the client in
// ctx against the limits (none set: every one is allowed). A refusal is
// temporarily_unavailable, whose reason the library logs once; limits
// that cannot be read refuse too (a server_error).
func (s *Service) allowRequest(ctx context.Context) error {
	if s.set.Limits == nil {
		return nil
	}
	ip, _ := ctx.Value(clientIPKey{}).(string)
	ok, why, err := s.set.Limits.Allow(ctx, ip, s.now())
	switch {
	case err != nil:
		return fmt.Errorf("authorization request limits: %w", err)
	case !ok:
		return errTooManyRequests(why)
	}
	return nil
}
