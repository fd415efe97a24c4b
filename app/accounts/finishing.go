package accounts

import (
	"context"
	"time"
)

// finishTimeout bounds the rest of an action that goes on after its
// request was cancelled (finishing).
const finishTimeout = 10 * time.Second

// finishing is ctx without its cancellation, for finishTimeout: an action
// whose steps are separate writes (sign-out everywhere; a password reset
// after its transaction) runs to its end when the client hangs up
// halfway, rather than stopping with some of its protections applied and
// others not — remembered browsers still skipping the second factor, or
// linked identities the user asked to remove still signing in.
func finishing(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
}
