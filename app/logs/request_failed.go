package logs

import (
	"context"
	"errors"
	"log/slog"
)

// clientGoneKey marks a line lowered to info because the request it
// reports had been cancelled (ClientGone, RequestFailed).
const clientGoneKey = "client_gone"

// RequestFailed logs a request's failure (msg and args, which carry err)
// at level, or at info with client_gone=true when err is a cancellation:
// the client hung up (or the server is stopping) and the store's call
// ended with it, which is nothing for an operator to act on and, under
// load, turned every timed-out client into a warning or an error line.
// The rule is the error's, not the context's: a failure with any other
// cause (a locked or lost database, a wrong code, a forged token) keeps
// its level even when the client left meanwhile, so hanging up never
// quiets a line that reports a problem or a refusal. A deadline that
// passed is the service's slowness and keeps its level too.
func RequestFailed(l *slog.Logger, level slog.Level, err error, msg string, args ...any) {
	if Cancelled(err) {
		level = slog.LevelInfo
		args = append(args, clientGoneKey, true)
	}
	l.Log(context.Background(), level, msg, args...)
}

// Cancelled reports whether err is a cancellation (context.Canceled in
// its chain: the drivers' cancelled statements and the net package's
// "operation was canceled" dials both say so).
func Cancelled(err error) bool { return err != nil && errors.Is(err, context.Canceled) }
