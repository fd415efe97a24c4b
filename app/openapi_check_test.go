package app_test

// The OpenAPI checker: an http.RoundTripper that validates every request to
// the app and the app's answer against the OpenAPI document the app serves
// (kin-openapi's router and openapi3filter), plus what openapi3filter leaves
// out: every Set-Cookie line, the headers documented for every response,
// and the error codes in redirects. It records which operations and
// statuses it has seen.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"
)

// loadOpenAPI loads a document and validates it as OpenAPI 3.1.
func loadOpenAPI(t testing.TB, data []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.True(t, doc.IsOpenAPI31OrLater())
	require.NoError(t, doc.Validate(loader.Context))
	return doc
}

// Marks on a request's context for the checker.
type checkMark int

const (
	// invalidRequest: the request breaks the document on purpose (a
	// malformed body, a missing csrfToken); only the answer is checked.
	invalidRequest checkMark = iota + 1
	// unknownAction: not in the document on purpose; the answer must be
	// components.responses.NotSupported.
	unknownAction
)

func marked(req *http.Request, m checkMark) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), m, true))
}

func isMarked(req *http.Request, m checkMark) bool { v, _ := req.Context().Value(m).(bool); return v }

// apiChecker validates the app's traffic against doc.
type apiChecker struct {
	t      testing.TB
	doc    *openapi3.T
	router routers.Router
	host   string // the app's host:port; other hosts (the IdP) pass unchecked

	mu       sync.Mutex
	seen     map[string]bool // "METHOD /path" of documented operations answered
	statuses map[string]bool // "METHOD /path status"
}

func newAPIChecker(t testing.TB, doc *openapi3.T, appURL string) *apiChecker {
	t.Helper()
	r, err := gorillamux.NewRouter(doc)
	require.NoError(t, err)
	u, err := url.Parse(appURL)
	require.NoError(t, err)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/css", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.PlainBodyDecoder)
	return &apiChecker{t: t, doc: doc, router: r, host: u.Host, seen: map[string]bool{}, statuses: map[string]bool{}}
}

// client is c (same jar, same redirect policy) with every exchange checked.
func (v *apiChecker) client(c *http.Client) *http.Client {
	cp := *c
	cp.Transport = v
	return &cp
}

func (v *apiChecker) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.URL.Host != v.host {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	v.check(req, reqBody, res, body)
	return res, nil
}

// check validates one exchange; failures are test errors naming it.
func (v *apiChecker) check(req *http.Request, reqBody []byte, res *http.Response, body []byte) {
	t := v.t
	t.Helper()
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.Path, res.StatusCode)
	// Forward-auth's answers have no body, and no CSP (documentPolicy).
	bodiless := len(body) == 0 && strings.HasPrefix(req.URL.Path, "/authz/")
	v.checkEveryResponse(what, res.Header, bodiless)
	if isMarked(req, unknownAction) {
		v.checkNotSupported(what, res, body)
		return
	}
	// The router matches on a copy: FindRoute may rewrite the URL.
	probe := req.Clone(context.Background())
	route, params, err := v.router.FindRoute(probe)
	if err != nil {
		t.Errorf("%s: not in the OpenAPI document: %v", what, err)
		return
	}
	op := req.Method + " " + route.Path
	v.mu.Lock()
	v.seen[op] = true
	v.statuses[op+" "+strconv.Itoa(res.StatusCode)] = true
	v.mu.Unlock()

	rq := req.Clone(context.Background())
	rq.Body = io.NopCloser(bytes.NewReader(reqBody))
	in := &openapi3filter.RequestValidationInput{
		Request: rq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	if !isMarked(req, invalidRequest) {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("%s: the request does not match the document: %v", what, err)
		}
	}
	documented := route.Operation.Responses.Status(res.StatusCode)
	if documented == nil {
		t.Errorf("%s: status not documented", what)
		return
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.StatusCode, Header: res.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s: the response does not match the document: %v\nbody: %.300s", what, err, body)
	}
	v.checkCookies(what, documented.Value, res.Header)
	v.checkErrorCodes(what, res, body)
}

// checkEveryResponse holds h to the headers marked x-latchkey-every-response:
// true on every response; not-json on every response but JSON (none
// there); documents on every response but JSON and bodiless forward-auth
// answers (none there); https on every response under an https SERVICE_URL
// and on none over http, where the suites run (TestStrictTransportSecurity
// checks https).
func (v *apiChecker) checkEveryResponse(what string, h http.Header, bodiless bool) {
	n := 0
	jsonAnswer := strings.HasPrefix(h.Get("Content-Type"), "application/json")
	for key, ref := range v.doc.Components.Headers {
		every := ref.Value.Extensions["x-latchkey-every-response"]
		var wanted bool
		switch every {
		case true:
			wanted = true
		case "not-json":
			wanted = !jsonAnswer
		case "documents":
			wanted = !jsonAnswer && !bodiless
		case "https":
			wanted = false
		default:
			continue
		}
		n++
		name, _ := ref.Value.Extensions["x-header-name"].(string)
		require.NotEmpty(v.t, name, "components.headers.%s has no x-header-name", key)
		got := h.Values(name)
		if !wanted {
			if len(got) != 0 {
				v.t.Errorf("%s: header %s (%v) on a JSON or forward-auth answer: %q", what, name, every, got)
			}
			continue
		}
		if len(got) != 1 {
			v.t.Errorf("%s: header %s: want one value, got %q", what, name, got)
			continue
		}
		if err := ref.Value.Schema.Value.VisitJSON(got[0], openapi3.EnableJSONSchema2020()); err != nil {
			v.t.Errorf("%s: header %s: %v", what, name, err)
		}
	}
	require.Equal(v.t, 5, n, "the document lists the five security headers")
}

// checkCookies matches every Set-Cookie line against the response's
// documented Set-Cookie (openapi3filter reads only the first line).
func (v *apiChecker) checkCookies(what string, documented *openapi3.Response, h http.Header) {
	lines := h.Values("Set-Cookie")
	if len(lines) == 0 {
		return
	}
	ref := documented.Headers["Set-Cookie"]
	if ref == nil {
		v.t.Errorf("%s: sets cookies but documents none: %q", what, cookieNames(lines))
		return
	}
	for _, line := range lines {
		if err := ref.Value.Schema.Value.VisitJSON(line, openapi3.EnableJSONSchema2020()); err != nil {
			v.t.Errorf("%s: Set-Cookie %s is not documented for this response: %v", what, cookieNames([]string{line}), err)
		}
	}
}

func cookieNames(lines []string) []string {
	var names []string
	for _, l := range lines {
		n, _, _ := strings.Cut(l, "=")
		names = append(names, n)
	}
	return names
}

// checkErrorCodes: an error code in a redirect (Location or JSON mode's url)
// must be one of the document's ErrorCode values.
func (v *apiChecker) checkErrorCodes(what string, res *http.Response, body []byte) {
	targets := []string{res.Header.Get("Location")}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err == nil {
			if u, ok := m["url"].(string); ok {
				targets = append(targets, u)
			}
		}
	}
	codes := v.doc.Components.Schemas["ErrorCode"].Value.Enum
	for _, raw := range targets {
		u, err := url.Parse(raw)
		if err != nil || raw == "" {
			continue
		}
		if p := path.Base(u.Path); (p == "error" || p == "signin") && u.Query().Has("error") {
			if code := u.Query().Get("error"); !slices.Contains(codes, any(code)) {
				v.t.Errorf("%s: error code %q is not in the document's ErrorCode", what, code)
			}
		}
	}
}

// checkNotSupported holds an unknown action's answer to
// components.responses.NotSupported: 400, text/plain, the text.
func (v *apiChecker) checkNotSupported(what string, res *http.Response, body []byte) {
	if res.StatusCode != http.StatusBadRequest {
		v.t.Errorf("%s: an unknown action must answer 400", what)
		return
	}
	if res.Request != nil && res.Request.Method == http.MethodHead {
		return
	}
	mt := v.doc.Components.Responses["NotSupported"].Value.Content.Get(res.Header.Get("Content-Type"))
	if mt == nil {
		v.t.Errorf("%s: content type %q is not NotSupported's", what, res.Header.Get("Content-Type"))
		return
	}
	if err := mt.Schema.Value.VisitJSON(string(body), openapi3.EnableJSONSchema2020()); err != nil {
		v.t.Errorf("%s: %v", what, err)
	}
	v.mu.Lock()
	v.seen["not supported"] = true
	v.mu.Unlock()
}

// operations lists the document's operations as "METHOD /path", those
// below the base path and those at the root of the listener (path items
// with their own servers).
func operations(doc *openapi3.T) (base, root []string) {
	for p, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			op := method + " " + p
			if len(item.Servers) > 0 {
				root = append(root, op)
			} else {
				base = append(base, op)
			}
		}
	}
	sort.Strings(base)
	sort.Strings(root)
	return base, root
}

// requireCovered fails unless each of ops got a real answer checked and
// each status the document gives them was answered at least once.
func (v *apiChecker) requireCovered(t testing.TB, ops []string) {
	t.Helper()
	for _, op := range ops {
		require.True(t, v.seen[op], "%s: no real answer checked", op)
	}
	for _, s := range documentedStatuses(v.doc, ops) {
		require.True(t, v.statuses[s], "%s: documented but never answered", s)
	}
}

// documentedStatuses is every "METHOD /path status" of ops.
func documentedStatuses(doc *openapi3.T, ops []string) []string {
	var out []string
	for _, op := range ops {
		method, p, _ := strings.Cut(op, " ")
		for code := range doc.Paths.Value(p).GetOperation(method).Responses.Map() {
			out = append(out, op+" "+code)
		}
	}
	sort.Strings(out)
	return out
}
