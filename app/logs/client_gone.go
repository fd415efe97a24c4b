package logs

import (
	"context"
	"errors"
	"log/slog"
)

// ClientGone wraps h so that a warning or an error logged for a request
// whose context was already cancelled (the client hung up, or the server
// is stopping) is written at info with client_gone=true: the failure was
// the cancellation's, not the service's, and nothing for an operator to
// act on. The OpenID Provider's library (zitadel/oidc) logs every
// server_error at error level through slog's default logger, including
// a refresh-token rotation whose transaction the cancelled request rolled
// back (the token stays good for a retry); under load, clients that time
// out turned into error lines. Records logged without a request context
// (context.Background) are never changed, nor those of a context whose
// deadline passed: a request too slow for its time limit is the service's.
func ClientGone(h slog.Handler) slog.Handler { return clientGone{h} }

type clientGone struct{ next slog.Handler }

func (c clientGone) Enabled(ctx context.Context, level slog.Level) bool {
	if level >= slog.LevelWarn && gone(ctx) {
		return c.next.Enabled(ctx, slog.LevelInfo)
	}
	return c.next.Enabled(ctx, level)
}

func (c clientGone) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && gone(ctx) {
		r = r.Clone()
		r.Level = slog.LevelInfo
		r.AddAttrs(slog.Bool(clientGoneKey, true))
	}
	return c.next.Handle(ctx, r)
}

// gone reports whether ctx was cancelled (not timed out).
func gone(ctx context.Context) bool {
	return ctx != nil && errors.Is(ctx.Err(), context.Canceled)
}

func (c clientGone) WithAttrs(attrs []slog.Attr) slog.Handler {
	return clientGone{c.next.WithAttrs(attrs)}
}

func (c clientGone) WithGroup(name string) slog.Handler {
	return clientGone{c.next.WithGroup(name)}
}
