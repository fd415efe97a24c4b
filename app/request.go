package app

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/csrf"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// request is what next-auth's init computes on every action: the CSRF token
// (reused from a valid cookie or freshly issued), whether this POST proved
// it, the parsed body and the resolved callback URL.
type request struct {
	csrfToken    string
	csrfVerified bool
	form         url.Values
	data         json.RawMessage // "data" of a JSON body (POST /session)
	callbackURL  string
	jsonMode     bool // answer redirects with {"url": ...}
	returnHeader bool // v5 client: X-Auth-Return-Redirect
}

// errBodyTooLarge and errBadBody make a 413 / 400 before any handler runs.
var (
	errBodyTooLarge = echo.NewHTTPError(http.StatusRequestEntityTooLarge, "request body too large")
	errBadBody      = echo.NewHTTPError(http.StatusBadRequest, "malformed request body")
)

// action is a handler that runs after request init.
type action func(echo.Context, *request) error

// withRequest runs init before h (CSRF cookie, body, callback-url cookie)
// and turns a sign-in failure h returns into its answer (fail). The
// request comes from a pool and goes back once answered: nothing keeps it
// past its request.
func (a *App) withRequest(h action) echo.HandlerFunc {
	return func(c echo.Context) error {
		rq := a.requests.Get().(*request)
		defer func() {
			*rq = request{}
			a.requests.Put(rq)
		}()
		if err := a.initRequest(c, rq); err != nil {
			return err
		}
		return a.answer(c, rq, h(c, rq))
	}
}

// withCSRF is withRequest for a POST: h runs only when the posted
// csrfToken matches the cookie; otherwise the route's own reaction does.
func (a *App) withCSRF(h, onMismatch action) echo.HandlerFunc {
	return a.withRequest(func(c echo.Context, rq *request) error {
		if !rq.csrfVerified {
			return onMismatch(c, rq)
		}
		return h(c, rq)
	})
}

// answer sends a handler's *signin.Error through fail; other errors go on
// to echo's error handler.
func (a *App) answer(c echo.Context, rq *request, err error) error {
	if err == nil {
		return nil // before errors.As, whose target would escape on every request
	}
	var e *signin.Error
	if errors.As(err, &e) {
		return a.fail(c, rq, e)
	}
	return err
}

// initRequest fills rq, a zero request: its form stays nil (reads as
// empty) unless a body fills it.
func (a *App) initRequest(c echo.Context, rq *request) error {
	r, w := c.Request(), c.Response()
	if r.Method == http.MethodPost {
		if err := a.parseBody(w, r, rq); err != nil {
			return err
		}
	}

	if tok, sum, found, ok := cookies.ReadCut(r, a.names.CSRF, '|'); ok && found {
		rq.csrfToken, _ = a.csrf.ParseParts(tok, sum) // "" unless the hash matches
	}
	if rq.csrfToken == "" {
		rq.csrfToken = a.issueCSRF(w)
	} else if r.Method == http.MethodPost {
		rq.csrfVerified = csrf.Verify(rq.csrfToken, rq.form.Get("csrfToken"))
	}

	rq.jsonMode = rq.form.Get("json") == "true"
	_, rq.returnHeader = r.Header[http.CanonicalHeaderKey("X-Auth-Return-Redirect")]

	// Callback URL: body or query first, then the cookie, then the origin;
	// always through the redirect policy. The cookie is only rewritten when
	// the resolved value changed.
	stored, hasCookie := a.originCallback.Read(r) // the callback-url cookie, read as cookies.Read
	target := rq.form.Get("callbackUrl")
	if target == "" && r.URL.RawQuery != "" { // echo parses the query into a map on first use
		target = c.QueryParam("callbackUrl")
	}
	switch {
	case target != "":
		rq.callbackURL = a.redirect(target)
	case hasCookie:
		rq.callbackURL = a.redirect(stored)
	default:
		rq.callbackURL = a.policy.Origin()
	}
	switch {
	case hasCookie && stored == rq.callbackURL:
	case rq.callbackURL == a.policy.Origin():
		a.originCallback.Set(w)
	default:
		a.cookies.Set(w, a.names.CallbackURL, rq.callbackURL, timeZero, 0)
	}
	return nil
}

// parseBody reads a form or JSON body of at most cfg.MaxBodyBytes.
func (a *App) parseBody(w http.ResponseWriter, r *http.Request, rq *request) error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errBodyTooLarge
		}
		return errBadBody
	}
	switch ct {
	case "application/json":
		if len(body) == 0 {
			return nil
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return errBadBody
		}
		rq.form = url.Values{}
		for k, v := range m {
			var s string
			if json.Unmarshal(v, &s) == nil {
				rq.form.Set(k, s)
			}
		}
		rq.data = m["data"]
	default:
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return errBadBody
		}
		rq.form = form
	}
	return nil
}
