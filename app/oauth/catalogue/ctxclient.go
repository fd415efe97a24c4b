package catalogue

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// withContext returns a copy of hc whose requests are also cancelled with ctx.
// goth's FetchUser takes no context and builds its requests with
// http.NewRequest, so the context has to ride in on the transport.
func withContext(ctx context.Context, hc *http.Client) *http.Client {
	c := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = ctxTransport{ctx: ctx, base: base}
	return &c
}

type ctxTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

// RoundTrip keeps the request's own context (the client's timeout) and adds
// ours; the merged context lives until the response body is closed.
func (t ctxTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(t.ctx, cancel)
	done := func() { stop(); cancel() }
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		done()
		return nil, err
	}
	resp.Body = &doneBody{ReadCloser: resp.Body, done: sync.OnceFunc(done)}
	return resp, nil
}

type doneBody struct {
	io.ReadCloser
	done func()
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	b.done()
	return err
}
