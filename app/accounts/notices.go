package accounts

import (
	"context"
	"strings"

	"github.com/latchkey-auth/latchkey/app/email"
)

// notify sends to addr the notice of a change that has committed (send
// renders and delivers it), in ctx's values (the e-mail's language)
// without its cancellation: the notice goes out whether or not the client
// waits for the answer. A client that hung up after the change — whoever
// changed the address, linked an identity or turned two-factor on with a
// stolen session included — must not keep the owner from hearing of it;
// the sender's own timeout bounds the delivery. A failure undoes nothing:
// it is logged once, as failed, with the address masked (the SMTP
// library's error may quote it).
func (s *Service) notify(ctx context.Context, addr, failed string, send func(context.Context) error, args ...any) {
	if err := send(context.WithoutCancel(ctx)); err != nil {
		cause := strings.ReplaceAll(err.Error(), addr, email.Mask(addr))
		s.Log.Error(failed, append(args, "err", cause)...)
	}
}
