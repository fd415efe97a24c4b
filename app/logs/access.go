package logs

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Access writes the access log's line, one per request, exactly as
// slog's TextHandler or JSONHandler would write the same record, without
// slog's generic record and attribute machinery: profiled under wrk, that
// machinery was 6.5% of the CPU of a cookieless GET /session. A line whose
// strings would need quoting or escaping (never latchkey's own routes,
// methods and ids; possible in principle) goes through slog itself. The
// tests hold both formats to slog byte for byte.
type Access struct {
	w    io.Writer // nil: every line goes through slow
	json bool
	slow *slog.Logger // the same output through slog, for lines with odd strings
	bufs sync.Pool
	time stamps // the lines' times, formatted once a second
}

// NewAccess writes access lines to w, in JSON when json is set, else in
// slog's text format, when level lets info lines through.
func NewAccess(w io.Writer, json bool, level slog.Leveler) *Access {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if json {
		h = slog.NewJSONHandler(w, opts)
	}
	a := &Access{w: w, json: json, slow: slog.New(h)}
	a.bufs.New = func() any { b := make([]byte, 0, 256); return &b }
	return a
}

// AccessVia writes every access line through l, whatever its handler:
// for tests and embedders that give latchkey a logger, not an output.
func AccessVia(l *slog.Logger) *Access { return &Access{slow: l} }

// Enabled reports whether access lines are written at all.
func (a *Access) Enabled() bool { return a.slow.Enabled(context.Background(), slog.LevelInfo) }

// Request writes one request's line: method, route pattern, status,
// duration and request id, stamped now.
func (a *Access) Request(now time.Time, method, route string, status int, took time.Duration, id string) {
	if a.w == nil || !plain(method) || !plain(route) || !plain(id) {
		r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
		r.AddAttrs(slog.String("method", method), slog.String("route", route), slog.Int("status", status),
			slog.Duration("duration", took), slog.String("request_id", id))
		if h := a.slow.Handler(); h.Enabled(context.Background(), slog.LevelInfo) {
			_ = h.Handle(context.Background(), r)
		}
		return
	}
	p := a.bufs.Get().(*[]byte)
	b := (*p)[:0]
	if a.json {
		b = append(b, `{"time":"`...)
		b = a.time.append(b, now, true)
		b = append(b, `","level":"INFO","msg":"request","method":"`...)
		b = append(b, method...)
		b = append(b, `","route":"`...)
		b = append(b, route...)
		b = append(b, `","status":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64(took), 10)
		b = append(b, `,"request_id":"`...)
		b = append(b, id...)
		b = append(b, "\"}\n"...)
	} else {
		b = append(b, "time="...)
		b = a.time.append(b, now, false)
		b = append(b, " level=INFO msg=request method="...)
		b = append(b, method...)
		b = append(b, " route="...)
		b = append(b, route...)
		b = append(b, " status="...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, " duration="...)
		b = append(b, took.String()...)
		b = append(b, " request_id="...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	_, _ = a.w.Write(b)
	*p = b
	a.bufs.Put(p)
}

// plain: a non-empty string of bytes that neither format quotes or
// escapes (letters, digits and - _ . : / + * ( ) ! ~ @ ,). Every access
// line checks its method, route and request id, so a byte is one look-up.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !plainBytes[s[i]] {
			return false
		}
	}
	return true
}

// plainBytes marks the bytes plain allows.
var plainBytes = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-_.:/+*()!~@," {
		t[c] = true
	}
	return t
}()
