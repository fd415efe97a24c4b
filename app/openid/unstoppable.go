package openid

import (
	"context"
	"time"
)

// revocationTimeout bounds a revocation that goes on after its request
// was cancelled (unstoppable).
const revocationTimeout = 10 * time.Second

// unstoppable is ctx without its cancellation, for revocationTimeout: a
// revocation a security rule calls for (the family of a reused code or
// refresh token, an ended sign-in's tokens, an application's grant at
// logout) runs to its end when the caller hangs up meanwhile. With the
// request's own context, a client that gave up, or timed out while the
// database was slow, cancelled the statement and left alive the tokens
// the reuse said had leaked.
func unstoppable(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), revocationTimeout)
}
