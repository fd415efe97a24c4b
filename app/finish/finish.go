// Package finish lets a protective action run to its end when the client
// that asked for it hangs up halfway.
package finish

import (
	"context"
	"time"
)

// Timeout bounds what goes on after the request was cancelled.
const Timeout = 10 * time.Second

// Detached is ctx (its values: request id, actor) without its
// cancellation, for Timeout. A sign-out, a revocation a security rule
// calls for, the rest of a sign-out everywhere or of a password reset:
// with the request's own context, a client that gave up, or timed out
// while the database was slow, cancelled the statement and left alive
// what the user or the rule had ended.
func Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), Timeout)
}
