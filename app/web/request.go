package web

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
)

// Request is what next-auth's init computes on every action: the CSRF
// token (reused from a valid cookie or freshly issued), whether this POST
// proved it, the parsed body and the resolved callback URL.
type Request struct {
	CSRFToken    string
	CSRFVerified bool
	Form         url.Values      // the posted form or JSON strings; nil (reads as empty) without a body
	Data         json.RawMessage // "data" of a JSON body (POST /session)
	CallbackURL  string
	JSONMode     bool // answer redirects with {"url": ...}
	ReturnHeader bool // v5 client: X-Auth-Return-Redirect
	// LangHint is the language tag the handler chose for a request that
	// has no lang parameter (HintLang); "" if none.
	LangHint string
}

// Action is a handler that runs after request init.
type Action func(echo.Context, *Request) error

// errBodyTooLarge and errBadBody make a 413 / 400 before any handler runs.
var (
	errBodyTooLarge = echo.NewHTTPError(http.StatusRequestEntityTooLarge, "request body too large")
	errBadBody      = echo.NewHTTPError(http.StatusBadRequest, "malformed request body")
)

// WithRequest runs init before h (CSRF cookie, body, callback-url cookie)
// and turns a failure h returns into its answer (Fail). The Request comes
// from a pool and goes back once answered: nothing keeps it past its
// request.
func (k *Kit) WithRequest(h Action) echo.HandlerFunc {
	return func(c echo.Context) error {
		rq := k.requests.Get().(*Request)
		defer func() {
			*rq = Request{}
			k.requests.Put(rq)
		}()
		if err := k.initRequest(c, rq); err != nil {
			return err
		}
		return k.answer(c, rq, h(c, rq))
	}
}

// WithCSRF is WithRequest for a POST: h runs only when the posted
// csrfToken matches the cookie; otherwise the route's own reaction does.
func (k *Kit) WithCSRF(h, onMismatch Action) echo.HandlerFunc {
	return k.WithRequest(func(c echo.Context, rq *Request) error {
		if !rq.CSRFVerified {
			return onMismatch(c, rq)
		}
		return h(c, rq)
	})
}

// IssueCSRF sets a new CSRF token's cookie, "token|hash" as next-auth
// writes it, and returns the token: on every first visit, so the cookie
// line is its only allocation (the token is a piece of it).
func (k *Kit) IssueCSRF(w http.ResponseWriter) string {
	raw, sum := k.csrf.Issue()
	return k.csrfCookie.Set(w, raw[:], sum[:])
}

// initRequest fills rq, a zero Request: its form stays nil (reads as
// empty) unless a body fills it. A form or query value that is not text
// (IsText) is refused with 400, unless the route answers it itself
// (KitConfig.OwnTextRoutes).
func (k *Kit) initRequest(c echo.Context, rq *Request) error {
	r, w := c.Request(), c.Response()
	if r.Method == http.MethodPost {
		if err := k.parseBody(w, r, rq); err != nil {
			return err
		}
	}
	if !textRequest(c, rq) && !k.ownText[c.Path()] {
		return errNotText // before any cookie is set or value resolved
	}

	if tok, sum, found, ok := cookies.ReadCut(r, k.names.CSRF, '|'); ok && found {
		rq.CSRFToken, _ = k.csrf.ParseParts(tok, sum) // "" unless the hash matches
	}
	if rq.CSRFToken == "" {
		rq.CSRFToken = k.IssueCSRF(w)
	} else if r.Method == http.MethodPost {
		rq.CSRFVerified = csrf.Verify(rq.CSRFToken, rq.Form.Get("csrfToken"))
	}

	rq.JSONMode = rq.Form.Get("json") == "true"
	_, rq.ReturnHeader = r.Header[http.CanonicalHeaderKey("X-Auth-Return-Redirect")]

	// Callback URL: body or query first, then the cookie, then the origin;
	// always through the redirect policy. The cookie is only rewritten when
	// the resolved value changed.
	stored, hasCookie := k.originCallback.Read(r) // the callback-url cookie, read as cookies.Read
	target := rq.Form.Get("callbackUrl")
	if target == "" && r.URL.RawQuery != "" { // echo parses the query into a map on first use
		target = c.QueryParam("callbackUrl")
	}
	switch {
	case target != "":
		rq.CallbackURL = k.KeepLang(c, rq, k.Redirect(target))
	case hasCookie:
		rq.CallbackURL = k.Redirect(stored)
	default:
		rq.CallbackURL = k.policy.Origin()
	}
	switch {
	case hasCookie && stored == rq.CallbackURL:
	case rq.CallbackURL == k.policy.Origin():
		k.originCallback.Set(w)
	default:
		k.cookies.Set(w, k.names.CallbackURL, rq.CallbackURL, timeZero, 0)
	}
	return nil
}

// BodyError is the answer to a body that could not be read through
// http.MaxBytesReader: 413 when it was over the limit, else 400 (the
// documented answers of every POST route, wherever its body is read).
func BodyError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errBodyTooLarge
	}
	return errBadBody
}

// parseBody reads a form or JSON body of at most server.max_body_bytes.
func (k *Kit) parseBody(w http.ResponseWriter, r *http.Request, rq *Request) error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body, err := k.readBody(w, r)
	if err != nil {
		return err
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
		rq.Form = url.Values{}
		for key, v := range m {
			var s string
			if json.Unmarshal(v, &s) == nil {
				rq.Form.Set(key, s)
			}
		}
		rq.Data = m["data"]
	default:
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return errBadBody
		}
		rq.Form = form
	}
	return nil
}

// readBody reads r's body whole: 413 past server.max_body_bytes, 400 when
// it breaks off.
func (k *Kit) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, k.maxBody))
	if err != nil {
		return nil, BodyError(err)
	}
	return body, nil
}

// SetCallbackURL makes target (through the redirect policy) the request's
// callback URL and the browser's callback-url cookie, which the OAuth
// callback goes to: an action that starts a sign-in for its own page
// (linking an identity from the account page) comes back to it.
func (k *Kit) SetCallbackURL(c echo.Context, rq *Request, target string) {
	rq.CallbackURL = k.KeepLang(c, rq, k.Redirect(target))
	k.cookies.Set(c.Response(), k.names.CallbackURL, rq.CallbackURL, timeZero, 0)
}
